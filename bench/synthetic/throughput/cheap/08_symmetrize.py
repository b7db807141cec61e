def p(g):
    h, w = len(g), len(g[0])
    mirrors = [
        [row[::-1] for row in g],
        [row[:] for row in g[::-1]],
        [row[::-1] for row in g[::-1]],
    ]
    def agreement(m):
        return sum(
            1 for y in range(h) for x in range(w) if g[y][x] and g[y][x] == m[y][x]
        )
    best = max(mirrors, key=agreement)
    return [[g[y][x] or best[y][x] for x in range(w)] for y in range(h)]
