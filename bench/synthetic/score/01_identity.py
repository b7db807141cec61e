def transform(g):
    return g
