"""Small statistics used in summaries: proportions with Wilson score intervals."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: Number of successes.
        total: Number of trials.
        z: Normal quantile (default: 95% two-sided).

    Returns:
        ``(low, high)``; ``(0.0, 0.0)`` when there are no trials.
    """
    if total <= 0:
        return (0.0, 0.0)
    if not 0 <= successes <= total:
        raise ValueError("successes must be between 0 and total")
    p = successes / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
