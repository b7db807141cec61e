from collections import deque

N4 = ((-1, 0), (1, 0), (0, -1), (0, 1))
N8 = N4 + ((-1, -1), (-1, 1), (1, -1), (1, 1))

def count(g, steps, same_color):
    h, w = len(g), len(g[0])
    seen = [[False] * w for _ in range(h)]
    counts = [0] * 10
    for sy in range(h):
        for sx in range(w):
            c = g[sy][sx]
            if c == 0 or seen[sy][sx]:
                continue
            counts[c] += 1
            seen[sy][sx] = True
            queue = deque([(sy, sx)])
            while queue:
                y, x = queue.popleft()
                for dy, dx in steps:
                    ny, nx = y + dy, x + dx
                    if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx]:
                        v = g[ny][nx]
                        if v == c or (v and not same_color):
                            seen[ny][nx] = True
                            queue.append((ny, nx))
    return [min(n, 9) for n in counts]

def p(g):
    return [count(g, s, u) for s in (N4, N8) for u in (True, False)]
