"""``arcjudge score``: safe scoring of model-written Definition programs."""
