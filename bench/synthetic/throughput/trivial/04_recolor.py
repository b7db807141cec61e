TABLE = (0, 2, 3, 4, 5, 6, 7, 8, 9, 1)

def p(g):
    return [[TABLE[c] for c in row] for row in g]
