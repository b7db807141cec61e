def transform(g):
    return g[::-1]
