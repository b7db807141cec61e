def transform(g):
    return [list(c) for c in zip(*g)]
