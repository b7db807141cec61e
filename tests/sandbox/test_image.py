"""The runtime image's inputs ship inside the package; `arcjudge image build` finds them there."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import arcjudge
from arcjudge.cli import main
from arcjudge.sandbox import image
from arcjudge.sandbox.docker_daemon import DockerUnavailable, expected_image

ROOT = Path(__file__).resolve().parents[2]
INPUTS = (*image.TAG_FILES, "README.md")


def test_the_inputs_live_in_the_package_not_the_checkout():
    package = Path(arcjudge.__file__).resolve().parent
    assert image.IMAGE_DIR == package / "sandbox" / "images"
    for name in INPUTS:
        assert (image.IMAGE_DIR / name).is_file(), name
    assert not (ROOT / "images").exists(), "one copy of the image inputs, inside the package"


def test_print_tag_follows_the_documented_tag_scheme(monkeypatch, capsys):
    dpkg = shutil.which("dpkg")
    if dpkg is None:
        pytest.skip("build-rootfs.sh needs a Debian-based host (dpkg)")
    arch = subprocess.run([dpkg, "--print-architecture"], capture_output=True, text=True)
    monkeypatch.setenv("ARCJUDGE_DEBIAN_SUITE", "some-suite")
    monkeypatch.setenv("ARCJUDGE_DEBIAN_MIRROR", "http://deb.invalid/debian")
    monkeypatch.delenv("ARCJUDGE_IMAGE_REPO", raising=False)
    monkeypatch.delenv("ARCJUDGE_IMAGE", raising=False)
    manifest = "".join(
        f"{hashlib.sha256((image.IMAGE_DIR / n).read_bytes()).hexdigest()}  {n}\n"
        for n in ("Dockerfile", "build-rootfs.sh", "packages.txt")
    )
    manifest += f"suite=some-suite\narch={arch.stdout.strip()}\n"
    tag = "v1-" + hashlib.sha256(manifest.encode()).hexdigest()[:12]

    assert main(["image", "build", "--print-tag"]) == 0
    out, err = capsys.readouterr()
    assert out == f"arcjudge-runtime:{tag}\n"
    assert err == ""
    assert expected_image() == f"arcjudge-runtime:{tag}"


def test_print_tag_notes_an_overriding_arcjudge_image(monkeypatch, capsys):
    monkeypatch.setenv("ARCJUDGE_IMAGE", "elsewhere:v0")
    assert main(["image", "build", "--print-tag"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == image.image_reference()
    assert "ARCJUDGE_IMAGE=elsewhere:v0" in err
    assert expected_image() == "elsewhere:v0"


@pytest.mark.parametrize("option", ["--force", "--dockerfile"])
def test_print_tag_builds_nothing(option, capsys):
    assert main(["image", "build", "--print-tag", option]) == 2
    assert "--print-tag builds nothing" in capsys.readouterr().err


def test_missing_inputs_blame_the_installation(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(image, "IMAGE_DIR", tmp_path)
    monkeypatch.delenv("ARCJUDGE_IMAGE", raising=False)
    assert main(["image", "build", "--print-tag"]) == 2
    err = capsys.readouterr().err
    assert "inputs are missing" in err and "Dockerfile" in err and "reinstall" in err
    assert "checkout" not in err
    with pytest.raises(DockerUnavailable, match="inputs are missing"):
        expected_image()


def test_dockerfile_builds_the_shipped_context_under_the_script_tag():
    argv = image.build_command(dockerfile=True)
    reference = image.image_reference()
    assert argv[:4] == ["docker", "build", "-t", reference]
    assert f"TAG={reference.partition(':')[2]}" in argv
    assert argv[-1] == str(image.IMAGE_DIR)
    assert image.build_command(force=True) == ["bash", str(image.build_script()), "--force"]


def test_build_prints_the_reference_when_the_image_exists(docker_image, monkeypatch, capsys):
    monkeypatch.delenv("ARCJUDGE_IMAGE", raising=False)
    if image.image_reference() != docker_image:
        pytest.skip(f"ARCJUDGE_IMAGE={docker_image} is not the content tag")
    assert main(["image", "build"]) == 0
    assert capsys.readouterr().out == f"{docker_image}\n"


def test_the_inputs_are_package_data(tmp_path):
    """What setuptools' build_py (the wheel's contents) copies from a copy of the source tree."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "src", tree / "src", ignore=ignore)
    built = tmp_path / "lib"
    setup = "from setuptools import setup; setup()"
    subprocess.run(
        [sys.executable, "-c", setup, "-q", "build_py", "--build-lib", str(built)],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    shipped = built / "arcjudge" / "sandbox" / "images"
    for name in INPUTS:
        assert (shipped / name).read_bytes() == (image.IMAGE_DIR / name).read_bytes(), name
