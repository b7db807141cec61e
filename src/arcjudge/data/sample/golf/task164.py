p = lambda g: [r + r for r in g]
