from collections import Counter

def p(g):
    h, w = len(g), len(g[0])
    windows = {}
    for y in range(h - 2):
        for x in range(w - 2):
            windows[(y, x)] = tuple(g[y + dy][x + dx] for dy in range(3) for dx in range(3))
    counts = Counter(windows.values())
    out = [row[:] for row in g]
    for (y, x), win in windows.items():
        if counts[win] == 1:
            out[y + 1][x + 1] = 7
    return out
