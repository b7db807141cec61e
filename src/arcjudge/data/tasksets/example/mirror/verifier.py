"""mirror: the output is the input reversed left to right."""


def verify(grid: list[list[int]]) -> list[list[int]]:
    """Reverse every row."""
    return [row[::-1] for row in grid]
