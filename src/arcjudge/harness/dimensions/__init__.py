"""``arcjudge dimensions``: instances, answers and scores of the five PotARCin dimensions."""
