"""Reading a ``validate`` output directory's ``manifest.json`` (for mutate, score, dimensions)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcjudge.errors import InputError
from arcjudge.verifiers.sources import VerifierSource

__all__ = ["Manifest", "read_manifest"]


@dataclass(frozen=True)
class Manifest:
    """What later commands need from a validate run.

    Attributes:
        path: The ``manifest.json`` read.
        sources: Source name -> ``{"name", "kind", "path"}``.
        chosen: Task id -> the source chosen for it (tasks without a valid source absent).
        valid: Task id -> names of every source valid for it.
    """

    path: Path
    sources: dict[str, dict[str, Any]]
    chosen: dict[str, str]
    valid: dict[str, set[str]]

    def verifier_source(self, name: str) -> VerifierSource:
        """The :class:`VerifierSource` the manifest describes under ``name``."""
        spec = self.sources[name]
        return VerifierSource(name, spec["kind"], spec["path"])


def read_manifest(directory: Path) -> Manifest:
    """Read ``DIRECTORY/manifest.json``.

    Raises:
        InputError: When it is missing, unreadable, or not a validate manifest (also when a
            chosen source is not described).
    """
    path = directory / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        sources = {s["name"]: s for s in manifest["sources"]}
        tasks = manifest["tasks"].items()
        chosen = {t: e["chosen"] for t, e in tasks if e.get("chosen")}
        valid = {t: set(e.get("valid", [])) for t, e in tasks}
    except FileNotFoundError:
        raise InputError(f"{directory}: no manifest.json (run arcjudge validate)") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: not a validate manifest ({exc})") from None
    missing = sorted({name for name in chosen.values() if name not in sources})
    if missing:
        raise InputError(f"{path}: chosen sources not described: {', '.join(missing)}")
    return Manifest(path, sources, chosen, valid)
