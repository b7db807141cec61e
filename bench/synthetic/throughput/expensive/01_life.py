STEPS = 120

def p(g):
    h, w = len(g), len(g[0])
    alive = [[1 if c else 0 for c in row] for row in g]
    for _ in range(STEPS):
        nxt = [[0] * w for _ in range(h)]
        for y in range(h):
            for x in range(w):
                n = 0
                for ny in (y - 1, y, y + 1):
                    if 0 <= ny < h:
                        r = alive[ny]
                        for nx in (x - 1, x, x + 1):
                            if 0 <= nx < w:
                                n += r[nx]
                n -= alive[y][x]
                nxt[y][x] = 1 if n == 3 or (n == 2 and alive[y][x]) else 0
        alive = nxt
    return [[3 if a else 0 for a in row] for row in alive]
