"""`[tool.tfmigrate]` in pyproject.toml, and the path globs it (and the CLI) use.

Found like ruff's: the nearest pyproject.toml with a `[tool.tfmigrate]` table, walking up from the
first PATH (or the current directory); `--config FILE` names one instead. Command-line flags
override what the file says. Keys:

    [tool.tfmigrate]
    target = "keras"                 # or "ctl"
    select = ["TFM1", "TFM302"]      # codes or prefixes; default: every rule
    ignore = ["TFM201"]
    per-file-ignores = { "tests/**" = ["TFM3"], "legacy_*.py" = ["ALL"] }
    exclude = [".*", "build"]        # replaces the default excludes
    extend-exclude = ["third_party"] # adds to them
    jobs = 4                         # 0: one per CPU
    timeout = 60                     # seconds per file before it is reported as too complex (E009); 0: none
    safe-only = false                # true: unsafe (structural) rules only report
    standalone = false               # passed through to the ctl target

Glob semantics (`exclude`, `extend-exclude`, `per-file-ignores`): a path is taken relative to the
directory of the config file (the current directory without one), with `/` separators. A pattern
without `/` matches any one component of it (`build`, `*_pb2.py`, `.*`), like .gitignore; a
pattern with `/` is anchored there and matches the path or one of its parent directories
(`legacy/**`, `tools/gen_*.py`, `experiments/old`). `**` spans directories.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .registry import RegistryError, expand_selection

CONFIG_FILE = "pyproject.toml"
DEFAULT_EXCLUDE = (".*", "__pycache__", "node_modules", "site-packages", "build", "dist", "venv", "env")
TARGETS = ("keras", "ctl")
KEYS = ("target", "select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "jobs", "safe-only", "standalone", "timeout")


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    """What `[tool.tfmigrate]` said; None where it said nothing (the CLI's default then applies)."""

    path: Path | None = None
    target: str | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    jobs: int | None = None
    timeout: float | None = None
    safe_only: bool | None = None
    standalone: bool | None = None

    @property
    def root(self) -> Path:
        """The directory config globs are relative to."""
        return self.path.parent.resolve() if self.path is not None else Path.cwd().resolve()


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest pyproject.toml with a [tool.tfmigrate] table, from `start` (or cwd) upwards."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    if not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / CONFIG_FILE
        if candidate.is_file() and "tfmigrate" in _read(candidate).get("tool", {}):
            return candidate
    return None


def load_config(path: str | os.PathLike | None) -> Config:
    """Parse and check the `[tool.tfmigrate]` table of `path` (None: an empty Config)."""
    if path is None:
        return Config()
    path = Path(path)
    data = _read(path)
    table = data.get("tool", {}).get("tfmigrate")
    if table is None:
        raise ConfigError(f"{path}: no [tool.tfmigrate] table")
    where = f"{path}: [tool.tfmigrate]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in KEYS:
            hint = f" (did you mean '{key.replace('_', '-')}'?)" if key.replace("_", "-") in KEYS else ""
            raise ConfigError(f"{where}: unknown key '{key}'{hint}; known keys: {', '.join(KEYS)}")

    def strings(key: str) -> tuple[str, ...] | None:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: '{key}' must be a list of strings, got {value!r}")
        return tuple(value)

    def codes(key: str, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None:
            try:
                expand_selection(list(value))
            except RegistryError as exc:
                raise ConfigError(f"{where}: '{key}': {exc}") from exc
        return value

    def boolean(key: str) -> bool | None:
        value = table.get(key)
        if value is not None and not isinstance(value, bool):
            raise ConfigError(f"{where}: '{key}' must be true or false, got {value!r}")
        return value

    target = table.get("target")
    if target is not None and target not in TARGETS:
        raise ConfigError(f"{where}: 'target' must be one of {', '.join(TARGETS)}, got {target!r}")
    jobs = table.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0):
        raise ConfigError(f"{where}: 'jobs' must be an integer >= 0, got {jobs!r}")
    timeout = table.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0):
        raise ConfigError(f"{where}: 'timeout' must be a number of seconds >= 0, got {timeout!r}")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{where}: 'per-file-ignores' must be a table of glob = [codes]")
    per_file: list[tuple[str, frozenset[str]]] = []
    for pattern, value in pfi.items():
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: per-file-ignores '{pattern}' must be a list of rule codes, got {value!r}")
        try:
            per_file.append((pattern, frozenset(expand_selection(value))))
        except RegistryError as exc:
            raise ConfigError(f"{where}: per-file-ignores '{pattern}': {exc}") from exc
    return Config(
        path=path,
        target=target,
        select=codes("select", strings("select")),
        ignore=codes("ignore", strings("ignore")),
        per_file_ignores=tuple(per_file),
        exclude=strings("exclude"),
        extend_exclude=strings("extend-exclude") or (),
        jobs=jobs,
        timeout=timeout,
        safe_only=boolean("safe-only"),
        standalone=boolean("standalone"),
    )


def _read(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc


# -- globs ----------------------------------------------------------------------------------------


@functools.cache
def _compile(pattern: str) -> tuple[re.Pattern[str], bool]:
    """(regex, anchored): anchored patterns match a whole relative path, others one component."""
    pattern = pattern.strip()
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/") if anchored else pattern.rstrip("/")
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(pattern[i]))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z"), anchored


def match_glob(pattern: str, relpath: str, skip: int = 0) -> bool:
    """Whether `relpath` (relative, `/`-separated) or one of its parent directories matches,
    leaving out its first `skip` components (and the parent directories they make up)."""
    regex, anchored = _compile(pattern)
    parts = [p for p in relpath.split("/") if p not in ("", ".")]
    if not anchored:
        return any(regex.match(part) for part in parts[skip:] if part != "..")
    return any(regex.match("/".join(parts[:end])) for end in range(max(skip, 0) + 1, len(parts) + 1))


def _relative_to(full: str, base: str) -> str | None:
    """`Path(full).relative_to(base).as_posix()` for two absolute normalized paths, or None when
    `full` is not under `base` (string work: pathlib's objects cost more than the check)."""
    if os.name != "posix":
        try:
            return Path(full).relative_to(base).as_posix()
        except ValueError:
            return None
    if full == base:
        return "."
    prefix = base if base.endswith("/") else base + "/"
    return full[len(prefix):] if full.startswith(prefix) else None


@dataclass(frozen=True)
class PathFilter:
    """Which files are excluded and which rule codes are ignored per file, relative to `root`."""

    root: Path = field(default_factory=lambda: Path.cwd().resolve())
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    _directories: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # see _resolved

    def relative(self, path: str | os.PathLike) -> str:
        """`path` relative to the root (else to the current directory), `/`-separated."""
        absolute = os.path.abspath(path)
        fulls = (absolute, self._resolved(os.fspath(path)))
        for base in (str(self.root), self._resolved(os.getcwd())):
            for full in fulls:
                inside = _relative_to(full, base)
                if inside is not None:
                    return inside
        return Path(absolute).as_posix().lstrip("/")

    def _resolved(self, path: str) -> str:
        """`str(Path(path).resolve())`, with its directory resolved once per filter (a realpath
        of every file, component by component, was most of a large tree's discovery time)."""
        if ".." in path.replace(os.sep, "/").split("/"):  # (symlinks first, then `..`: as resolve() does it)
            return str(Path(path).resolve())
        head, tail = os.path.split(os.path.abspath(path))
        if not tail or os.path.islink(os.path.join(head, tail)):
            return str(Path(path).resolve())
        found = self._directories.get(head)
        if found is None:
            found = self._directories[head] = str(Path(head).resolve())
        return os.path.join(found, tail)

    def excluded(self, path: str | os.PathLike, below: str | os.PathLike | None = None) -> bool:
        """Whether an exclude pattern matches `path`; with `below` (a directory the user named),
        only the part of the path under it counts: its ancestors are the user's choice."""
        rel = self.relative(path)
        skip = 0
        if below is not None:
            base = [p for p in self.relative(below).split("/") if p not in ("", ".")]
            parts = [p for p in rel.split("/") if p not in ("", ".")]
            if parts[: len(base)] == base:
                skip = len(base)
        return any(match_glob(pattern, rel, skip) for pattern in self.exclude)

    def ignored_codes(self, path: str | os.PathLike) -> frozenset[str]:
        if not self.per_file_ignores:
            return frozenset()
        rel = self.relative(path)
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if match_glob(pattern, rel):
                out |= codes
        return frozenset(out)


def path_filter(config: Config, exclude: tuple[str, ...] | None = None, extend_exclude: tuple[str, ...] = ()) -> PathFilter:
    """The filter for a run: CLI `exclude` replaces the config's, which replaces the defaults."""
    base = exclude if exclude is not None else config.exclude if config.exclude is not None else DEFAULT_EXCLUDE
    return PathFilter(
        root=config.root,
        exclude=tuple(base) + tuple(config.extend_exclude) + tuple(extend_exclude),
        per_file_ignores=config.per_file_ignores,
    )
