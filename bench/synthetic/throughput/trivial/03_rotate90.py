def p(g):
    return [list(col) for col in zip(*g[::-1])]
