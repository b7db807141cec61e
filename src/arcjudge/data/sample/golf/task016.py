p = lambda g: [[int("0564312798"[c]) for c in r] for r in g]
