"""``arcjudge dimensions analyze``: the study's tables and figures from scored items."""
