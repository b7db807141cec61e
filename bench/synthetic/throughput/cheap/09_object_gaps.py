def p(g):
    h, w = len(g), len(g[0])
    label = [[-1] * w for _ in range(h)]
    objs = []
    for sy in range(h):
        for sx in range(w):
            c = g[sy][sx]
            if c == 0 or label[sy][sx] >= 0:
                continue
            k = len(objs)
            label[sy][sx] = k
            stack, cells = [(sy, sx)], []
            while stack:
                y, x = stack.pop()
                cells.append((y, x))
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if 0 <= ny < h and 0 <= nx < w and label[ny][nx] < 0 and g[ny][nx] == c:
                        label[ny][nx] = k
                        stack.append((ny, nx))
            objs.append(cells)
    gap = [99] * len(objs)
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            d = min(
                abs(ay - by) + abs(ax - bx) for ay, ax in objs[i] for by, bx in objs[j]
            )
            gap[i] = min(gap[i], d)
            gap[j] = min(gap[j], d)
    out = [row[:] for row in g]
    for cells, d in zip(objs, gap):
        for y, x in cells:
            out[y][x] = min(d, 9) if d < 99 else 0
    return out
