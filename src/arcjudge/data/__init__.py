"""Data files shipped with arcjudge (task id lists, the bundled sample)."""
