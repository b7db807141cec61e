"""arcjudge.harness (see README)."""
