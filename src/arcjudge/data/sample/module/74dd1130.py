"""74dd1130: transpose the grid."""


def transform(g):
    return [list(column) for column in zip(*g)]
