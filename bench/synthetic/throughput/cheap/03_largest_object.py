def p(g):
    h, w = len(g), len(g[0])
    label = [[-1] * w for _ in range(h)]
    objs = []
    for sy in range(h):
        for sx in range(w):
            if g[sy][sx] == 0 or label[sy][sx] >= 0:
                continue
            k = len(objs)
            label[sy][sx] = k
            stack, cells = [(sy, sx)], []
            while stack:
                y, x = stack.pop()
                cells.append((y, x))
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        ny, nx = y + dy, x + dx
                        if 0 <= ny < h and 0 <= nx < w and g[ny][nx] and label[ny][nx] < 0:
                            label[ny][nx] = k
                            stack.append((ny, nx))
            objs.append(cells)
    if not objs:
        return g
    out = [row[:] for row in g]
    for cells in objs:
        y0, y1 = min(y for y, _ in cells), max(y for y, _ in cells)
        x0, x1 = min(x for _, x in cells), max(x for _, x in cells)
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                if out[y][x] == 0 and (y in (y0, y1) or x in (x0, x1)):
                    out[y][x] = 5
    best = max(range(len(objs)), key=lambda k: len(objs[k]))
    for y, x in objs[best]:
        out[y][x] = 8
    return out
