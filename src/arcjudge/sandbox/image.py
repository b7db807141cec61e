"""The docker runtime image: its inputs (shipped inside the package) and how to build it.

The inputs live in ``images/`` beside this module (``Dockerfile``, ``build-rootfs.sh``,
``packages.txt``, ``README.md``), installed as package data, so an installed wheel can
compute the image's content tag and build it without a source checkout. The tag is a hash
over the first three files' contents and names, the Debian suite and the architecture
(``images/README.md``, "Tag scheme"); ``build-rootfs.sh --print-tag`` computes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from arcjudge.errors import ArcjudgeError

IMAGE_DIR = Path(__file__).resolve().parent / "images"
BUILD_SCRIPT_NAME = "build-rootfs.sh"
TAG_FILES = ("Dockerfile", "build-rootfs.sh", "packages.txt")
IMAGE_ENV = "ARCJUDGE_IMAGE"


class ImageError(ArcjudgeError):
    """The image's inputs are missing or its tag cannot be computed; the message says why."""


def build_script() -> Path:
    """The path of ``build-rootfs.sh`` in the installed package."""
    return IMAGE_DIR / BUILD_SCRIPT_NAME


def _check_inputs() -> None:
    missing = [name for name in TAG_FILES if not (IMAGE_DIR / name).is_file()]
    if missing:
        raise ImageError(
            f"the runtime image's inputs are missing from {IMAGE_DIR}: {', '.join(missing)} "
            "(a broken arcjudge installation: reinstall it)"
        )


def image_reference() -> str:
    """Return the reference of the image these inputs build, e.g. ``arcjudge-runtime:v1-<h>``.

    Needs neither root nor docker (it runs ``build-rootfs.sh --print-tag``).

    Raises:
        ImageError: If the inputs are missing or the script cannot compute the tag.
    """
    _check_inputs()
    proc = subprocess.run(
        ["bash", str(build_script()), "--print-tag"], capture_output=True, text=True, check=False
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise ImageError(
            f"{BUILD_SCRIPT_NAME} --print-tag failed (exit code {proc.returncode}): "
            f"{proc.stderr.strip() or 'no output'}"
        )
    return lines[-1]


def overriding_image(reference: str | None = None) -> str | None:
    """Return ``$ARCJUDGE_IMAGE`` if it is set and names another image than these inputs build.

    The docker backend runs in ``$ARCJUDGE_IMAGE`` when it is set, whatever was built.

    Args:
        reference: What ``image_reference()`` returns, if already known.

    Raises:
        ImageError: If the variable is set and the tag cannot be computed.
    """
    chosen = os.environ.get(IMAGE_ENV, "")
    if not chosen:
        return None
    return chosen if chosen != (reference or image_reference()) else None


def build_command(*, force: bool = False, dockerfile: bool = False) -> list[str]:
    """Return the command that builds the image.

    Args:
        force: Rebuild even if the image exists (``build-rootfs.sh`` only).
        dockerfile: Use ``docker build`` on the ``Dockerfile`` (needs a registry) instead
            of ``build-rootfs.sh`` (debootstrap + ``docker import``, no registry).

    Raises:
        ImageError: If the inputs are missing or the tag cannot be computed.
    """
    _check_inputs()
    if not dockerfile:
        return ["bash", str(build_script())] + (["--force"] if force else [])
    reference = image_reference()
    tag = reference.partition(":")[2]
    return ["docker", "build", "-t", reference, "--build-arg", f"TAG={tag}", str(IMAGE_DIR)]


def build_image(
    *, force: bool = False, dockerfile: bool = False, stdout: TextIO | None = None
) -> int:
    """Build the image; on success write its reference as one line to ``stdout``.

    Progress goes to stderr, so ``IMAGE=$(arcjudge image build)`` works as with the script.

    Args:
        force: Rebuild even if the image exists (``build-rootfs.sh`` only).
        dockerfile: Use ``docker build`` (needs a registry); see ``build_command``.
        stdout: Where the reference goes (default ``sys.stdout``).

    Returns:
        The build command's exit code (0 on success).

    Raises:
        ImageError: If the inputs are missing or the tag cannot be computed.
    """
    out = stdout or sys.stdout
    argv = build_command(force=force, dockerfile=dockerfile)
    if dockerfile:  # docker build's progress goes to our stderr (file descriptor 2)
        code = subprocess.run(argv, stdout=2, check=False).returncode
        if code != 0:
            return code
        reference = image_reference()
    else:  # the script writes only the reference to stdout
        proc = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
        if proc.returncode != 0:
            return proc.returncode
        lines = proc.stdout.strip().splitlines()
        reference = lines[-1] if lines else image_reference()
    out.write(reference + "\n")
    out.flush()
    return 0
