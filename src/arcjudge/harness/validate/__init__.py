"""``arcjudge validate``: which verifier sources are right on every input of each task."""
