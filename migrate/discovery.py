"""Which files a run migrates: the .py/.ipynb files under the PATHs, less excluded ones.

- Exclusion rules (hidden dirs, venvs, build dirs, config excludes) apply below a path the user
  names, never to its ancestors: `tfmigrate ~/.cache/proj/` migrates the project.
- A directory that cannot be read is an E002 error for that path; the rest of the tree goes on.
- Only regular files are read: a FIFO or device named `x.py` would block or never end (a note).
- A symlink is followed; a file reached twice (a link and its target) is migrated once, under
  the target's own name when the tree holds it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .config import PathFilter

SOURCE_SUFFIXES = (".py", ".ipynb")


@dataclass
class Discovery:
    files: list[tuple[str, str]] = field(default_factory=list)  # (file, the PATH it was found under)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, E002 message)
    notes: list[str] = field(default_factory=list)  # `path: note: ...` lines for people


def discover_all(paths: list[str], path_filter: PathFilter | None = None, *, force_exclude: bool = False) -> Discovery:
    """Raises FileNotFoundError for a PATH that does not exist (bad usage); the rest is reported."""
    path_filter = path_filter or PathFilter()
    out = Discovery()
    found: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            if not os.path.islink(path):
                raise FileNotFoundError(f"{raw}: no such file or directory") from None
            out.errors.append((raw, "cannot read: broken symbolic link"))
            continue
        except OSError as exc:
            out.errors.append((raw, f"cannot read: {exc.strerror}"))
            continue
        if stat.S_ISDIR(mode):
            _walk(path, path_filter, found, out)
        elif not stat.S_ISREG(mode):
            out.notes.append(f"{raw}: note: skipped: not a regular file")
        elif not (force_exclude and path_filter.excluded(path)):
            found.append((str(path), str(path.parent)))
    out.files = _unique(found)
    return out


def discover(paths: list[str], path_filter: PathFilter | None = None, *, force_exclude: bool = False) -> list[tuple[str, str]]:
    """(file, root) pairs for every .py/.ipynb file under `paths` (see `discover_all`)."""
    return discover_all(paths, path_filter, force_exclude=force_exclude).files


def _walk(root: Path, path_filter: PathFilter, found: list[tuple[str, str]], out: Discovery) -> None:
    def unreadable(exc: OSError) -> None:
        out.errors.append((str(exc.filename), f"cannot read directory: {exc.strerror}"))

    before, excluded = len(found), 0
    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        kept = []
        for name in sorted(dirnames):
            sub = Path(dirpath, name)
            if path_filter.excluded(sub, below=root) or os.path.exists(sub / "pyvenv.cfg"):
                excluded += 1
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            full = Path(dirpath, name)
            if path_filter.excluded(full, below=root):
                excluded += 1
                continue
            try:
                mode = os.stat(full).st_mode
            except OSError:
                mode = None  # a broken link: reading it reports E002
            if mode is not None and not stat.S_ISREG(mode):
                out.notes.append(f"{full}: note: skipped: not a regular file")
                continue
            found.append((str(full), str(root)))
    if len(found) == before and excluded:
        out.notes.append(f"{root}: note: nothing to migrate: {excluded} path(s) below it excluded (see `exclude`)")


def _unique(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One entry per real file: the first that is not a symlink, else the first."""
    winner: dict[str, int] = {}
    for index, (path, _) in enumerate(found):
        key = os.path.realpath(path)
        if key not in winner or (os.path.islink(found[winner[key]][0]) and not os.path.islink(path)):
            winner[key] = index
    return [found[index] for index in sorted(winner.values())]
