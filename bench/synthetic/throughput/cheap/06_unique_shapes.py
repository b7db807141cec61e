def objects(g):
    h, w = len(g), len(g[0])
    seen = [[False] * w for _ in range(h)]
    found = []
    for sy in range(h):
        for sx in range(w):
            c = g[sy][sx]
            if c == 0 or seen[sy][sx]:
                continue
            seen[sy][sx] = True
            stack, cells = [(sy, sx)], []
            while stack:
                y, x = stack.pop()
                cells.append((y, x))
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx] and g[ny][nx] == c:
                        seen[ny][nx] = True
                        stack.append((ny, nx))
            found.append(cells)
    return found

def normal(cells):
    forms = []
    for sy in (1, -1):
        for sx in (1, -1):
            for swap in (False, True):
                pts = [((x * sx, y * sy) if swap else (y * sy, x * sx)) for y, x in cells]
                my = min(a for a, _ in pts)
                mx = min(b for _, b in pts)
                forms.append(tuple(sorted((a - my, b - mx) for a, b in pts)))
    return min(forms)

def p(g):
    objs = objects(g)
    shapes = [normal(cells) for cells in objs]
    out = [row[:] for row in g]
    for cells, shape in zip(objs, shapes):
        if shapes.count(shape) == 1:
            for y, x in cells:
                out[y][x] = 5
    return out
