"""arcjudge.mutation (see README)."""
