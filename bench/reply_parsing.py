"""How long the reply parsers take on 1 MB replies of several shapes (issue 16: < 1 s).

Run by hand: ``python bench/reply_parsing.py [--size BYTES]``. Prints one line per reply
shape and parser with its CPU time (wall time in brackets: on a loaded machine it says
little), and exits non-zero if any took a second or more of CPU.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time

from arcjudge.harness.core.extract import extract_program
from arcjudge.harness.dimensions.replies import ParsedReply, parse_grid, parse_pair
from arcjudge.harness.dimensions.strategies.classification import parse_judgments
from arcjudge.harness.dimensions.strategies.output_grid import parse_outputs
from arcjudge.vocabulary import DEFINITION_ENTRY_POINTS


def parse_outputs_2x2(reply: str) -> ParsedReply[object]:
    """Output grids of two test inputs, two attempts each."""
    return parse_outputs(reply, 2, 2)


def extract(reply: str) -> ParsedReply[object]:
    """Definition replies: the program extracted (``how`` = the extraction's reason)."""
    found = extract_program(reply, DEFINITION_ENTRY_POINTS)
    return ParsedReply(found.code, found.reason)


def _shapes(size: int) -> dict[str, str]:
    rng = random.Random(0)
    unit = "[[0, 1, 2], [3, 4, 5]] "
    return {
        "random printable": "".join(rng.choice(string.printable) for _ in range(size)),
        "random grid alphabet": "".join(rng.choice("0123456789 ,[]\n|") for _ in range(size)),
        "open brackets": "[" * size,
        "nested open rows": "[[1," * (size // 4),
        "json grids": unit * (size // len(unit)),
        "digit rows": ("0 1 2 3 4 5 6 7 8 9\n" * (size // 20)),
        "one long digit line": "7" * size,
        "blank lines": "\n" * size,
        "fences": "```\n1 2\n" * (size // 8),
        "judgment words": "valid invalid " * (size // 14),
        "candidate lines": "Candidate 3: invalid\n" * (size // 21),
        "labels": "Input: Output: " * (size // 15),
        "spaces": " " * size,
        "chatter then answer": "Thinking... " * (size // 12) + "\n```\n1 2\n3 4\n```\n",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000, help="reply size in characters")
    args = parser.parse_args()
    worst = 0.0
    for name, reply in _shapes(args.size).items():
        for parse in (parse_grid, parse_judgments, parse_pair, parse_outputs_2x2, extract):
            wall, cpu = time.perf_counter(), time.process_time()
            result = parse(reply)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            worst = max(worst, cpu)
            print(
                f"{name:22} {parse.__name__:17} {cpu * 1000:8.1f} ms ({wall * 1000:8.1f})"
                f"  {result.how[:50]}"
            )
    print(f"worst: {worst * 1000:.1f} ms")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
