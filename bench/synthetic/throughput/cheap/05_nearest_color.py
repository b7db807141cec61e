def p(g):
    h, w = len(g), len(g[0])
    seeds = [(y, x, c) for y, row in enumerate(g) for x, c in enumerate(row) if c]
    if not seeds:
        return g
    out = [row[:] for row in g]
    for y in range(h):
        for x in range(w):
            if g[y][x]:
                continue
            best, color = 99, 0
            for sy, sx, c in seeds:
                d = abs(sy - y) + abs(sx - x)
                if d < best:
                    best, color = d, c
            out[y][x] = color
    return out
