def transform(g):
    m = {0: 0, 1: 2, 2: 1}
    return [[m.get(c, c) for c in r] for r in g]
