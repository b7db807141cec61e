from collections import Counter

def p(g):
    bg = Counter(c for row in g for c in row).most_common(1)[0][0]
    cells = [(y, x) for y, row in enumerate(g) for x, c in enumerate(row) if c != bg]
    if not cells:
        return g
    ys = [y for y, _ in cells]
    xs = [x for _, x in cells]
    return [row[min(xs) : max(xs) + 1] for row in g[min(ys) : max(ys) + 1]]
