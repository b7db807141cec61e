"""The program's minimal root file system (standard library only; root, Linux).

``plan()`` decides once, at supervisor start, what a program may see: the interpreter's
standard library, of its package directories (``site-packages``, ``dist-packages``, any
other ``sys.path`` directory) only the packages programs may import (``PROGRAM_PACKAGES``:
numpy and scipy, with their bundled libraries), the shared-library directories,
``/etc/ld.so.cache`` and a few ``/dev`` nodes. Nothing else installed beside arcjudge (a
data package, credentials in a package, arcjudge itself) exists in a program's view.
``enter_minimal_root()`` runs in a fresh mount namespace: it builds that tree on a tmpfs,
adds the program's module directories (read-only), a fresh ``/proc`` and a ``/tmp`` mount
point, pivots into it, detaches the host's tree, makes everything read-only and mounts the
program's private, size-capped scratch tmpfs at ``/tmp``. Nothing else of the host (task
data, package data, home or work directories, outputs, stores) exists in that view.
"""

from __future__ import annotations

import glob
import os
import shutil
import site
import sys
from typing import TYPE_CHECKING

# mypy resolves the sibling modules through the package; at run time this directory is
# on sys.path (see runner.py) and they are imported by bare name, as nothing here may
# import arcjudge
if TYPE_CHECKING:
    from typing import TypedDict

    from . import isolation as iso

    class RootPlan(TypedDict):
        """What programs see of the host (see :func:`plan`)."""

        links: dict[str, str]
        dirs: list[str]
        files: list[str]
        hide: list[str]
        sites: list[str]
        packages: list[str]

else:
    import isolation as iso

STAGING = "/tmp"
SCRATCH = "/tmp"
WORKDIR = "/tmp/work"
SCRATCH_INODES = 32768  # files and directories a program may make in its scratch
MODULES = "/opt/arcjudge/modules"
LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib")
TOP_LINKS = ("/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
FILES = ("/etc/ld.so.cache",)
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = (
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
)
HIDDEN_PACKAGES = ("arcjudge",)
PROGRAM_PACKAGES = ("numpy", "scipy")
"""What programs may import besides the standard library (where installed): each one's
package directory or module, and its wheel's bundled libraries (``numpy.libs``)."""
SITE_NAMES = ("site-packages", "dist-packages")


def _hidden_name(name: str) -> bool:
    """Whether a directory entry is one of ``HIDDEN_PACKAGES`` or its installed metadata."""
    for package in HIDDEN_PACKAGES:
        if name == package or name == f"{package}.egg-info":
            return True
        if name.startswith(f"{package}-") and name.endswith((".dist-info", ".egg-info")):
            return True
    return False


def _within(path: str, roots: list[str]) -> bool:
    return any(iso.is_within(path, r) for r in roots)


def site_dirs(stdlib: str) -> list[str]:
    """Every package directory of this interpreter, resolved (none of them shown whole).

    ``site-packages`` and ``dist-packages`` directories (the interpreter's, the user's,
    Debian's below the library directories) and every ``sys.path`` directory outside the
    standard library (an editable install's ``src``, a ``.pth`` file's addition).
    """
    found = [*site.getsitepackages(), site.getusersitepackages()]
    for path in sys.path:
        if path and (
            os.path.basename(path) in SITE_NAMES
            or not iso.is_within(os.path.realpath(path), stdlib)
        ):
            found.append(path)
    for top in LIBRARY_DIRS:
        for name in SITE_NAMES:
            found += glob.glob(os.path.join(top, "python*", name))
    real = {os.path.realpath(p) for p in found if os.path.isdir(p)}
    return sorted(p for p in real if not iso.is_within(p, "/proc"))


def _package_entry(name: str, packages: tuple[str, ...]) -> bool:
    """Whether a package directory's entry belongs to one of ``packages``."""
    for package in packages:
        if name in (package, f"{package}.libs", f"{package}.py"):
            return True
        if name.startswith(f"{package}.") and name.endswith(".so"):  # an extension module
            return True
    return False


def plan(runtime_dir: str, packages: tuple[str, ...] = PROGRAM_PACKAGES) -> RootPlan:
    """Return what programs see (paths only), decided from this interpreter.

    Args:
        runtime_dir: The sandbox runtime's own directory (never shown).
        packages: The installed packages programs may import (``PROGRAM_PACKAGES``).

    Returns:
        ``{"links": {path: target}, "dirs": [...], "files": [...], "hide": [...],
        "sites": [...], "packages": [...]}``: ``dirs`` are shown whole, ``sites`` are
        shown empty but for the ``packages`` entries in them.
    """
    links = {p: os.readlink(p) for p in TOP_LINKS if os.path.islink(p)}
    stdlib = os.path.realpath(os.path.dirname(os.__file__))
    sites = site_dirs(stdlib)
    wanted = [stdlib]
    wanted += [p for p in sys.path if p and os.path.isdir(p) and os.path.realpath(p) not in sites]
    wanted += [p for p in LIBRARY_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    dirs: list[str] = []
    for path in sorted({os.path.realpath(p) for p in wanted}, key=len):
        if iso.is_within(path, runtime_dir) or _within(path, dirs):
            continue
        dirs.append(path)
    hide: list[str] = []
    for path in dirs:
        try:
            entries = os.listdir(path)
        except OSError:
            entries = []
        for name in entries:  # the package and its metadata (an editable install's README)
            if _hidden_name(name) and os.path.isdir(os.path.join(path, name)):
                hide.append(os.path.join(path, name))
    hide += [p for p in [runtime_dir] if _within(p, dirs)]
    outermost: list[str] = []
    for path in sorted(set(hide), key=len):
        if not _within(path, outermost):
            outermost.append(path)
    files = [f for f in FILES if os.path.isfile(f)]
    shown: list[str] = []
    for path in sites:
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            continue
        shown += [os.path.join(path, n) for n in entries if _package_entry(n, packages)]
    return {
        "links": links,
        "dirs": dirs,
        "files": files,
        "hide": outermost,
        "sites": sites,
        "packages": shown,
    }


def _bind(handle: int, target: str) -> None:
    if not iso.mount(f"/proc/self/fd/{handle}", target, None, iso.MS_BIND | iso.MS_REC, None):
        raise OSError(f"could not bind {target}")


def _copy_readable(source: str, target: str) -> None:
    """Copy a directory the program's uid could not read, readable but root-owned."""
    shutil.copytree(source, target, symlinks=True)
    for root, _dirs, files in os.walk(target):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)


def _show_packages_only(root: str, root_plan: RootPlan, handles: dict[str, int]) -> None:
    """Empty every package directory in the new root, then bind the allowed packages in.

    A package directory inside a directory shown whole gets an empty tmpfs over it (it is
    made read-only with the rest of the tree); one outside gets an empty directory.
    """
    for path in root_plan["sites"]:
        target = root + path
        if _within(path, root_plan["dirs"]):
            if not iso.mount("tmpfs", target, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV,
                             "size=64k,mode=0755"):  # fmt: skip
                raise OSError(f"could not empty {path}")
        else:
            os.makedirs(target, 0o755, exist_ok=True)
    for path, handle in handles.items():
        target = root + path
        if os.path.isdir(f"/proc/self/fd/{handle}"):
            os.makedirs(target, 0o755, exist_ok=True)
        else:
            with open(target, "w"):
                pass
        _bind(handle, target)


def enter_minimal_root(
    root_plan: RootPlan, module_dirs: list[str], disk_bytes: int, owner: int
) -> list[str]:
    """Build the minimal root, pivot into it and mount ``/proc`` and the scratch space.

    Must run as root (of the host or of a user namespace) in a fresh, private mount
    namespace, as PID 1 of a fresh PID namespace: the new ``/proc`` (``hidepid=2``) is
    mounted before the host's tree is detached, which a user namespace requires.

    Args:
        root_plan: What ``plan()`` returned.
        module_dirs: Host directories the program may import from.
        disk_bytes: Size of the program's scratch tmpfs.
        owner: The uid and gid that own the program's working directory.

    Returns:
        The module directories as the program sees them.

    Raises:
        OSError: If any step fails.
    """
    handles = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in root_plan["dirs"]}
    file_handles = {p: os.open(p, os.O_PATH) for p in root_plan["files"]}
    package_handles = {p: os.open(p, os.O_PATH) for p in root_plan["packages"]}
    dev_handles = {n: os.open(f"/dev/{n}", os.O_PATH) for n in DEVICES}
    module_handles: list[int | None] = []
    for path in module_dirs:
        try:
            module_handles.append(os.open(path, os.O_PATH | os.O_DIRECTORY))
        except OSError:
            module_handles.append(None)
    try:
        if not iso.mount("tmpfs", STAGING, "tmpfs", iso.MS_NOSUID, "size=256m,mode=0755"):
            raise OSError("could not mount the staging tmpfs")
        root = STAGING
        # The scratch tmpfs first: directories of the plan below /tmp (a virtualenv there,
        # say) are bound on top of it and stay visible (and read-only).
        os.mkdir(root + SCRATCH, 0o755)
        if not iso.mount("tmpfs", root + SCRATCH, "tmpfs", iso.MS_NOSUID | iso.MS_NODEV,
                         f"size={disk_bytes},mode=0755,nr_inodes={SCRATCH_INODES}"):  # fmt: skip
            raise OSError("could not mount the scratch tmpfs")
        os.mkdir(root + WORKDIR, 0o700)
        os.chown(root + WORKDIR, owner, owner)
        for link, target in root_plan["links"].items():
            os.symlink(target, root + link)
        for path, handle in handles.items():
            os.makedirs(root + path, 0o755, exist_ok=True)
            _bind(handle, root + path)
        for path, handle in file_handles.items():
            os.makedirs(os.path.dirname(root + path), 0o755, exist_ok=True)
            with open(root + path, "w"):
                pass
            if not iso.mount(f"/proc/self/fd/{handle}", root + path, None, iso.MS_BIND, None):
                raise OSError(f"could not bind {path}")
        for path in root_plan["hide"]:
            if not iso.mount("tmpfs", root + path, "tmpfs", iso.MS_RDONLY, "size=4k,mode=0555"):
                raise OSError(f"could not hide {path}")
        _show_packages_only(root, root_plan, package_handles)
        os.makedirs(root + "/dev", 0o755)
        for name, handle in dev_handles.items():
            with open(f"{root}/dev/{name}", "w"):
                pass
            if not iso.mount(f"/proc/self/fd/{handle}", f"{root}/dev/{name}", None, iso.MS_BIND,
                             None):  # fmt: skip
                raise OSError(f"could not bind /dev/{name}")
        for name, target in DEV_LINKS:
            os.symlink(target, f"{root}/dev/{name}")
        for sub in ("/proc", "/tmp", "/.old", "/etc"):
            os.makedirs(root + sub, 0o755, exist_ok=True)
        if not iso.mount("proc", root + "/proc", "proc",
                         iso.MS_NOSUID | iso.MS_NODEV | iso.MS_NOEXEC, "hidepid=2"):  # fmt: skip
            raise OSError("could not mount the program's /proc")
        visible = []
        for k, module_handle in enumerate(module_handles):
            if module_handle is None:
                continue
            target = f"{root}{MODULES}/{k}"
            if not iso.world_readable_dir(f"/proc/self/fd/{module_handle}"):
                _copy_readable(f"/proc/self/fd/{module_handle}", target)
            else:
                os.makedirs(target, 0o755)
                _bind(module_handle, target)
            visible.append(f"{MODULES}/{k}")
    finally:
        for fd in [
            *handles.values(), *file_handles.values(), *dev_handles.values(),
            *package_handles.values(),
        ]:  # fmt: skip
            os.close(fd)
        for module_fd in module_handles:
            if module_fd is not None:
                os.close(module_fd)
    if not iso.pivot_root(root, root + "/.old"):
        raise OSError("pivot_root failed")
    os.chdir("/")
    if not iso.umount("/.old", iso.MNT_DETACH):
        raise OSError("could not detach the host's tree")
    os.rmdir("/.old")
    if not iso.make_tree_read_only("/"):
        raise OSError("could not make the program's root read-only")
    if not iso.make_mount_writable("/proc"):  # its own ids, the user namespace maps
        raise OSError("could not make the program's /proc writable")
    if not iso.make_mount_writable(SCRATCH):  # only the scratch mount: not what is on it
        raise OSError("could not make the scratch tmpfs writable")
    return visible
