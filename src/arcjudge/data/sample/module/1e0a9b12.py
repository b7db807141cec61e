"""1e0a9b12: every colored cell falls to the bottom of its column (order kept)."""


def transform(g):
    h = len(g)
    columns = []
    for column in zip(*g):
        cells = [v for v in column if v != 0]
        columns.append([0] * (h - len(cells)) + cells)
    return [list(row) for row in zip(*columns)]
