"""recolor: blue (1) cells become red (2); every other cell stays.

The entry point is the module's only public function (not named ``verify``): arcjudge
finds it without running the module and calls it under the name ``verify``.
"""

_FROM, _TO = 1, 2


def recolor_blue(grid: list[list[int]]) -> list[list[int]]:
    """Every blue cell red."""
    return [[_TO if cell == _FROM else cell for cell in row] for row in grid]
