"""Reading a source file and replacing it without ever losing anyone's work.

- Only a regular file is read (opened non-blocking: a FIFO swapped in after discovery never hangs).
- Before a file is replaced it must still be what was read (size, mtime, inode, bytes); a file
  edited during the run is left alone (`FileChanged`).
- The replacement is atomic (a temp file in the same directory, renamed over the file) and keeps
  the file's mode, owner and group. A file with hard links, or one whose owner cannot be kept
  (not ours, and we are not root), is rewritten in place instead, so its inode (the links, the
  owner) stays.
- A symlink is written through: its target gets the migrated text and the link stays a link.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass


class FileChanged(Exception):
    """The file changed on disk between reading and writing."""


class NotRegularFile(OSError):
    pass


@dataclass(frozen=True)
class Snapshot:
    data: bytes
    stat: os.stat_result


def read_source(path: str) -> Snapshot:
    """The file's bytes and its stat at the time they were read; raises OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(0, "not a regular file")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return Snapshot(b"".join(chunks), info)
    finally:
        os.close(fd)


def _check_unchanged(path: str, snap: Snapshot) -> None:
    try:
        now = read_source(path)
    except OSError as exc:
        raise FileChanged(f"{exc.strerror or exc}") from exc
    before, after = snap.stat, now.stat
    same = (before.st_ino, before.st_dev, before.st_size, before.st_mtime_ns) == (after.st_ino, after.st_dev, after.st_size, after.st_mtime_ns)
    if not same or now.data != snap.data:
        raise FileChanged("changed during migration")


def replace_file(path: str, data: bytes, snap: Snapshot) -> None:
    """Replace `path` (read as `snap`) with `data`; raises FileChanged or OSError, leaving it as it was."""
    path = os.path.realpath(path)  # a symlink stays a link: its target is what gets migrated
    info = snap.stat
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tfmigrate-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        in_place = info.st_nlink > 1
        if not in_place and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except PermissionError:
                in_place = True  # not ours to give away: keep the inode, and with it the owner
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        _check_unchanged(path, snap)
        if in_place:
            with open(path, "r+b") as handle:
                handle.write(data)
                handle.truncate()
        else:
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write(path: str, data: bytes, like: str | None = None) -> None:
    """Write a new file (an --out-dir copy) via a temp file and rename; keeps `like`'s (or the file's) mode."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    mode = None
    for candidate in (path, like):
        if candidate and os.path.exists(candidate):
            mode = stat.S_IMODE(os.stat(candidate).st_mode)
            break
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tfmigrate-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
