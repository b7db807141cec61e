def p(g):
    h, w = len(g), len(g[0])
    out = [row[:] for row in g]
    border = [(y, x) for y in range(h) for x in (0, w - 1)]
    border += [(y, x) for x in range(w) for y in (0, h - 1)]
    for wall in sorted({c for row in g for c in row if c}):
        outside = [[False] * w for _ in range(h)]
        stack = list(border)
        while stack:
            y, x = stack.pop()
            if 0 <= y < h and 0 <= x < w and not outside[y][x] and g[y][x] != wall:
                outside[y][x] = True
                stack += [(y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)]
        for y in range(h):
            for x in range(w):
                if g[y][x] == 0 and not outside[y][x]:
                    out[y][x] = 4
    return out
