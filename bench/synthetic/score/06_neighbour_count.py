def transform(g):
    h, w = len(g), len(g[0])
    out = [[0] * w for _ in range(h)]
    for i in range(h):
        for j in range(w):
            n = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    if 0 <= i + di < h and 0 <= j + dj < w and g[i + di][j + dj]:
                        n += 1
            out[i][j] = g[i][j] if n > 4 else 0
    return out
