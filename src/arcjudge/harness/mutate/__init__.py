"""``arcjudge mutate``: corrupted verifiers and the near-miss pairs they produce."""
