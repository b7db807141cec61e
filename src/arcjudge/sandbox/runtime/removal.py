"""Deleting what a program left (its scratch directory), however deep, never following links."""

from __future__ import annotations

import os
import time

_now = time.monotonic

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
REMOVE_SECONDS = 30.0


def remove_tree(path: str) -> None:
    """Delete a directory tree a program left, however deep; never raises.

    Iterative and descriptor-relative, holding one directory open at a time (a program can
    make trees deeper than the recursion limit and longer than ``PATH_MAX``); symlinks are
    removed, never followed. Gives up on what it cannot remove within ``REMOVE_SECONDS``.
    """
    try:
        parent = os.open(os.path.dirname(os.path.abspath(path)), _DIR_FLAGS)
    except OSError:
        return
    try:
        _remove_below(parent, os.path.basename(path), _now() + REMOVE_SECONDS)
    except Exception:  # nothing a program left may stop the supervisor
        pass
    finally:
        os.close(parent)


def _remove_below(parent: int, name: str, deadline: float) -> None:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return
    names: list[str] = []  # the directories below ``name`` that ``fd`` is in, top first
    stuck: set[tuple[int, str]] = set()  # (depth, name) of directories we cannot enter
    try:
        while _now() < deadline:
            try:
                os.fchmod(fd, 0o700)
            except OSError:
                pass
            child = None
            with os.scandir(fd) as entries:
                listed = list(entries)
            for entry in listed:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if (len(names), entry.name) not in stuck:
                            child = entry.name
                            break
                    else:
                        os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    pass
            if child is not None:
                try:
                    below = os.open(child, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    stuck.add((len(names), child))
                    continue
                os.close(fd)
                fd = below
                names.append(child)
                continue
            if not names:
                break
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            done = names.pop()
            try:
                os.rmdir(done, dir_fd=fd)
            except OSError:
                stuck.add((len(names), done))
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError:
        pass
