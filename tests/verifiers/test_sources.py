"""RE-ARC checkouts as verifier and generator sources: one function per task, sliced out."""

from __future__ import annotations

import re

import pytest

from arcjudge.verifiers.sources import SourceError, parse_generator_spec, parse_verifier_spec

VERIFIERS = "def verify_abc(I):\n    return I\n\n\ndef verify_xyz(I):\n    return I[::-1]\n"
GENERATORS = "def generate_abc(diff_lb, diff_ub):\n    return {'input': [[1]], 'output': [[1]]}\n"


def test_a_re_arc_directory_without_its_file_is_refused_naming_it(tmp_path):
    missing = re.escape(f"v: {tmp_path}: no verifiers.py (not a RE-ARC checkout)")
    with pytest.raises(SourceError, match=f"^{missing}$"):
        parse_verifier_spec(f"v=re-arc:{tmp_path}")
    missing = re.escape(f"generator: {tmp_path}: no generators.py (not a RE-ARC checkout)")
    with pytest.raises(SourceError, match=f"^{missing}$"):
        parse_generator_spec(f"re-arc:{tmp_path}")


def test_each_task_gets_its_own_function_of_a_re_arc_checkout(tmp_path):
    (tmp_path / "verifiers.py").write_text(VERIFIERS)
    (tmp_path / "generators.py").write_text(GENERATORS)
    verifier = parse_verifier_spec(f"v=re-arc:{tmp_path}").program_for("abc").program
    assert verifier is not None
    assert (verifier.entry_points, verifier.input_format, verifier.name) == (
        ("verify_abc",),
        "tuple",
        "v:abc",
    )
    assert b"verify_abc" in verifier.source and b"verify_xyz" not in verifier.source
    assert verifier.module_dirs == (str(tmp_path.resolve()),)
    generator = parse_generator_spec(f"re-arc:{tmp_path}").program_for("abc").program
    assert generator is not None
    assert (generator.entry_points, generator.input_format, generator.name) == (
        ("generate_abc",),
        "list",
        "generator:abc",
    )
    assert parse_verifier_spec(f"v=re-arc:{tmp_path}").program_for("nope").program is None
