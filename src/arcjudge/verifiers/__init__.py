"""arcjudge.verifiers (see README)."""
