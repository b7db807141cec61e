def p(g):
    h, w = len(g), len(g[0])
    out = [row[:] for row in g]
    for sy in range(0, h, 2):
        for sx in range(0, w, 2):
            if g[sy][sx]:
                continue
            seen = {(sy, sx)}
            stack = [(sy, sx)]
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    inside = 0 <= ny < h and 0 <= nx < w
                    if inside and g[ny][nx] == 0 and (ny, nx) not in seen:
                        seen.add((ny, nx))
                        stack.append((ny, nx))
            out[sy][sx] = min(9, len(seen).bit_length())
    return out
