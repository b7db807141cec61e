ROUNDS = 2

def dilate(mask, h, w):
    return [
        [
            any(mask[ny][nx] for ny in range(max(0, y - 1), min(h, y + 2))
                for nx in range(max(0, x - 1), min(w, x + 2)))
            for x in range(w)
        ]
        for y in range(h)
    ]

def erode(mask, h, w):
    return [
        [
            all(mask[ny][nx] for ny in range(max(0, y - 1), min(h, y + 2))
                for nx in range(max(0, x - 1), min(w, x + 2)))
            for x in range(w)
        ]
        for y in range(h)
    ]

def p(g):
    h, w = len(g), len(g[0])
    out = [row[:] for row in g]
    for c in sorted({c for row in g for c in row if c}):
        mask = [[v == c for v in row] for row in g]
        for _ in range(ROUNDS):
            mask = dilate(erode(mask, h, w), h, w)
            mask = erode(dilate(mask, h, w), h, w)
        for y in range(h):
            for x in range(w):
                if mask[y][x] and out[y][x] == 0:
                    out[y][x] = c
    return out
