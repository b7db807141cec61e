def p(g):
    h, w = len(g), len(g[0])
    out = [[0] * w for _ in range(h)]
    for x in range(w):
        column = [g[y][x] for y in range(h) if g[y][x] != 0]
        for k, c in enumerate(reversed(column)):
            out[h - 1 - k][x] = c
    return out
