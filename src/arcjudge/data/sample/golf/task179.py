p = lambda g: [*zip(*g)]
