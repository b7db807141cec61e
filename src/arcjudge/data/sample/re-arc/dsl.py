"""A tiny grid DSL in the RE-ARC style, written for the arcjudge sample.

Grids are tuples of tuples of ints (rows of cells). Cells are addressed as
(row, column) tuples; an "indices" value is a frozenset of such tuples. Functions
are plain and total where that is cheap; they raise like ordinary Python code
when given the wrong kind of argument.
"""

F = False
T = True

NEG_ONE = -1
ZERO = 0
ONE = 1
TWO = 2
THREE = 3
FOUR = 4
FIVE = 5
SIX = 6
SEVEN = 7
EIGHT = 8
NINE = 9
TEN = 10

ORIGIN = (0, 0)
UNITY = (1, 1)
DOWN = (1, 0)
RIGHT = (0, 1)
UP = (-1, 0)
LEFT = (0, -1)
TWO_BY_TWO = (2, 2)
THREE_BY_THREE = (3, 3)


# ---------------------------------------------------------------- numbers and logic


def identity(x):
    """Return the argument unchanged."""
    return x


def add(a, b):
    """Sum of two numbers, or of two (row, column) pairs."""
    if isinstance(a, tuple):
        return (a[0] + b[0], a[1] + b[1])
    return a + b


def subtract(a, b):
    """Difference of two numbers, or of two (row, column) pairs."""
    if isinstance(a, tuple):
        return (a[0] - b[0], a[1] - b[1])
    return a - b


def multiply(a, b):
    """Product of two numbers."""
    return a * b


def divide(a, b):
    """Floor division of two numbers."""
    return a // b


def increment(x):
    """x + 1."""
    return x + 1


def decrement(x):
    """x - 1."""
    return x - 1


def double(x):
    """2 * x."""
    return 2 * x


def positive(x):
    """Whether x > 0."""
    return x > 0


def iszero(x):
    """Whether x == 0."""
    return x == 0


def equality(a, b):
    """Whether a == b."""
    return a == b


def flip(b):
    """Logical not."""
    return not b


def both(a, b):
    """Logical and."""
    return a and b


def either(a, b):
    """Logical or."""
    return a or b


def branch(condition, a, b):
    """a if condition else b."""
    return a if condition else b


def astuple(a, b):
    """The pair (a, b)."""
    return (a, b)


# ---------------------------------------------------------------- containers


def initset(x):
    """A frozenset holding x."""
    return frozenset({x})


def insert(x, container):
    """container with x added."""
    return container | frozenset({x})


def remove(x, container):
    """container without x (same container type)."""
    return type(container)(e for e in container if e != x)


def combine(a, b):
    """Union of two sets, or concatenation of two tuples."""
    return a | b if isinstance(a, frozenset) else a + b


def difference(a, b):
    """Elements of a that are not in b."""
    return type(a)(e for e in a if e not in b)


def size(container):
    """Number of elements."""
    return len(container)


def first(container):
    """The first element (any element for a set)."""
    return next(iter(container))


def last(container):
    """The last element of a sequence."""
    return container[-1]


def other(container, value):
    """The element of a two-element container that is not value."""
    return first(remove(value, container))


def apply(function, container):
    """function mapped over container (same container type)."""
    return type(container)(function(e) for e in container)


def sfilter(container, condition):
    """Elements of container for which condition holds."""
    return type(container)(e for e in container if condition(e))


def order(container, key):
    """container as a tuple sorted by key (stable)."""
    return tuple(sorted(container, key=key))


def argmax(container, key):
    """The element with the largest key."""
    return max(container, key=key)


def argmin(container, key):
    """The element with the smallest key."""
    return min(container, key=key)


def repeat(item, count):
    """A tuple of count copies of item."""
    return tuple(item for _ in range(count))


# ---------------------------------------------------------------- function builders


def compose(outer, inner):
    """x -> outer(inner(x))."""
    return lambda x: outer(inner(x))


def chain(h, g, f):
    """x -> h(g(f(x)))."""
    return lambda x: h(g(f(x)))


def fork(outer, a, b):
    """x -> outer(a(x), b(x))."""
    return lambda x: outer(a(x), b(x))


def lbind(function, fixed):
    """y -> function(fixed, y)."""
    return lambda y: function(fixed, y)


def rbind(function, fixed):
    """x -> function(x, fixed)."""
    return lambda x: function(x, fixed)


def matcher(function, target):
    """x -> function(x) == target."""
    return lambda x: function(x) == target


# ---------------------------------------------------------------- grid shape


def height(grid):
    """Number of rows."""
    return len(grid)


def width(grid):
    """Number of columns."""
    return len(grid[0])


def shape(grid):
    """(height, width)."""
    return (len(grid), len(grid[0]))


def square(grid):
    """Whether the grid is square."""
    return len(grid) == len(grid[0])


def canvas(color, dims):
    """A grid of the given (height, width) filled with color."""
    return tuple(tuple(color for _ in range(dims[1])) for _ in range(dims[0]))


def asindices(grid):
    """All cell positions of the grid."""
    return frozenset((i, j) for i in range(len(grid)) for j in range(len(grid[0])))


# ---------------------------------------------------------------- colors


def palette(grid):
    """The set of colors in the grid."""
    return frozenset(v for row in grid for v in row)


def colorcount(grid, color):
    """How many cells have the color."""
    return sum(row.count(color) for row in grid)


def mostcolor(grid):
    """The most frequent color (ties: smallest color)."""
    cells = [v for row in grid for v in row]
    return max(sorted(set(cells)), key=cells.count)


def leastcolor(grid):
    """The least frequent color (ties: smallest color)."""
    cells = [v for row in grid for v in row]
    return min(sorted(set(cells)), key=cells.count)


def numcolors(grid):
    """Number of distinct colors."""
    return len(palette(grid))


def index(grid, loc):
    """The color at (row, column), or None outside the grid."""
    i, j = loc
    if 0 <= i < len(grid) and 0 <= j < len(grid[0]):
        return grid[i][j]
    return None


def ofcolor(grid, color):
    """Positions of the cells with the color."""
    return frozenset((i, j) for i, row in enumerate(grid) for j, v in enumerate(row) if v == color)


def replace(grid, old, new):
    """Every old cell becomes new."""
    return tuple(tuple(new if v == old else v for v in row) for row in grid)


def switch(grid, a, b):
    """Swap two colors."""
    return tuple(tuple(b if v == a else a if v == b else v for v in row) for row in grid)


def fill(grid, color, patch):
    """Paint the positions in patch (those inside the grid) with color."""
    rows = [list(row) for row in grid]
    h, w = len(rows), len(rows[0])
    for i, j in patch:
        if 0 <= i < h and 0 <= j < w:
            rows[i][j] = color
    return tuple(tuple(row) for row in rows)


def cellwise(a, b, fallback):
    """Where a and b agree keep the color, elsewhere use fallback."""
    return tuple(
        tuple(x if x == y else fallback for x, y in zip(ra, rb, strict=True))
        for ra, rb in zip(a, b, strict=True)
    )


# ---------------------------------------------------------------- geometry


def vmirror(grid):
    """Mirror along the vertical axis (left becomes right)."""
    return tuple(tuple(reversed(row)) for row in grid)


def hmirror(grid):
    """Mirror along the horizontal axis (top becomes bottom)."""
    return tuple(reversed(tuple(grid)))


def dmirror(grid):
    """Mirror along the main diagonal (transpose)."""
    return tuple(zip(*grid))


def cmirror(grid):
    """Mirror along the anti-diagonal."""
    return vmirror(dmirror(vmirror(grid)))


def rot90(grid):
    """Rotate a quarter turn clockwise."""
    return tuple(zip(*grid[::-1]))


def rot180(grid):
    """Rotate a half turn."""
    return tuple(tuple(reversed(row)) for row in reversed(tuple(grid)))


def rot270(grid):
    """Rotate a quarter turn counterclockwise."""
    return tuple(zip(*grid))[::-1]


def crop(grid, start, dims):
    """The dims = (height, width) subgrid whose top-left corner is start."""
    i, j = start
    h, w = dims
    return tuple(tuple(row[j : j + w]) for row in grid[i : i + h])


def tophalf(grid):
    """The upper half (rounding down)."""
    return tuple(grid[: len(grid) // 2])


def bottomhalf(grid):
    """The lower half (rounding down)."""
    return tuple(grid[len(grid) - len(grid) // 2 :])


def lefthalf(grid):
    """The left half (rounding down)."""
    return tuple(tuple(row[: len(row) // 2]) for row in grid)


def righthalf(grid):
    """The right half (rounding down)."""
    return tuple(tuple(row[len(row) - len(row) // 2 :]) for row in grid)


def hconcat(a, b):
    """a and b side by side."""
    return tuple(tuple(ra) + tuple(rb) for ra, rb in zip(a, b, strict=True))


def vconcat(a, b):
    """a above b."""
    return tuple(a) + tuple(b)


def upscale(grid, factor):
    """Every cell becomes a factor x factor block."""
    return tuple(
        tuple(v for v in row for _ in range(factor)) for row in grid for _ in range(factor)
    )


def downscale(grid, factor):
    """Keep every factor-th row and column."""
    return tuple(tuple(row[::factor]) for row in grid[::factor])


def hupscale(grid, factor):
    """Every cell becomes factor cells wide."""
    return tuple(tuple(v for v in row for _ in range(factor)) for row in grid)


def vupscale(grid, factor):
    """Every row is repeated factor times."""
    return tuple(tuple(row) for row in grid for _ in range(factor))


def shift(patch, offset):
    """Move positions by a (row, column) offset."""
    di, dj = offset
    return frozenset((i + di, j + dj) for i, j in patch)


def neighbors(loc):
    """The four orthogonal neighbours of a position."""
    i, j = loc
    return frozenset({(i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)})


def uppermost(patch):
    """Smallest row index of a patch."""
    return min(i for i, _ in patch)


def lowermost(patch):
    """Largest row index of a patch."""
    return max(i for i, _ in patch)


def leftmost(patch):
    """Smallest column index of a patch."""
    return min(j for _, j in patch)


def rightmost(patch):
    """Largest column index of a patch."""
    return max(j for _, j in patch)


def ulcorner(patch):
    """Top-left corner of the bounding box of a patch."""
    return (uppermost(patch), leftmost(patch))


def llcorner(patch):
    """Bottom-left corner of the bounding box of a patch."""
    return (lowermost(patch), leftmost(patch))


def subgrid(patch, grid):
    """The part of the grid under the bounding box of a patch."""
    top, left = ulcorner(patch)
    dims = (lowermost(patch) - top + 1, rightmost(patch) - left + 1)
    return crop(grid, (top, left), dims)
