from collections import deque

def p(g):
    h, w = len(g), len(g[0])
    out = [row[:] for row in g]
    starts = {(y, x) for y in range(h) for x in (0, w - 1)}
    starts |= {(y, x) for x in range(w) for y in (0, h - 1)}
    for sy, sx in sorted(starts):
        if g[sy][sx]:
            continue
        dist = {(sy, sx): 0}
        queue = deque([(sy, sx)])
        far = 0
        while queue:
            y, x = queue.popleft()
            d = dist[(y, x)]
            far = d
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    ny, nx = y + dy, x + dx
                    inside = 0 <= ny < h and 0 <= nx < w
                    if inside and g[ny][nx] == 0 and (ny, nx) not in dist:
                        dist[(ny, nx)] = d + 1
                        queue.append((ny, nx))
        out[sy][sx] = min(9, 1 + far // 4)
    return out
