def p(g):
    h, w = len(g), len(g[0])
    out = []
    for y in range(h):
        rows = g[max(0, y - 2) : y + 3]
        row = []
        for x in range(w):
            votes = [0] * 10
            lo = max(0, x - 2)
            for r in rows:
                for c in r[lo : x + 3]:
                    votes[c] += 1
            row.append(votes.index(max(votes)))
        out.append(row)
    return out
