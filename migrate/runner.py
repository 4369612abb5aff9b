"""Files in, results out: discovery, decoding, atomic writes, parallel jobs and the report."""

from __future__ import annotations

import difflib
import io
import json
import os
import shutil
import stat
import tempfile
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .engine import ERROR, MIGRATED, TODO, UNCHANGED, Finding, Options, transform_source

SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist", "venv", "env", ".venv"}

WRITE, DIFF, CHECK = "write", "diff", "check"


@dataclass
class FileOutcome:
    path: str
    status: str
    changed: bool = False
    rules: list[str] = field(default_factory=list)
    todos: list[Finding] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)
    diff: str = ""
    written_to: str | None = None

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "changed": self.changed,
            "rules": self.rules,
            "todos": [t.as_dict() for t in self.todos],
            "errors": [e.as_dict() for e in self.errors],
        }


@dataclass(frozen=True)
class Job:
    path: str
    dest: str | None  # where to write: the file itself, an --out-dir copy, or None (diff/check)
    mode: str
    options: Options


def discover(paths: list[str]) -> list[tuple[str, str]]:
    """(file, root) pairs for every Python file under `paths`, sorted, skipping venvs/build/hidden dirs."""
    found: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append((str(path), str(path.parent)))
            continue
        if not path.is_dir():
            raise FileNotFoundError(f"{raw}: no such file or directory")
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".") and d not in SKIP_DIRS and not (Path(dirpath, d) / "pyvenv.cfg").exists()
            )
            for name in sorted(filenames):
                if name.endswith(".py"):
                    found.append((str(Path(dirpath, name)), str(path)))
    seen: set[str] = set()
    unique = []
    for item in found:
        key = os.path.realpath(item[0])
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def decode(data: bytes) -> tuple[str, str]:
    """Text and encoding of a Python source file (PEP 263 cookie, BOM); raises UnicodeDecodeError/SyntaxError."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def atomic_write(path: str, data: bytes, like: str | None = None) -> None:
    """Write via a temp file in the same directory and rename; keeps `like`'s (or the file's) permissions."""
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


def run_job(job: Job) -> FileOutcome:
    try:
        with open(job.path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileOutcome(job.path, ERROR, errors=[Finding("E002", 0, f"cannot read: {exc.strerror}")])
    try:
        source, encoding = decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return FileOutcome(job.path, ERROR, errors=[Finding("E003", 0, f"cannot decode: {exc}")])
    result = transform_source(source, filename=job.path, options=job.options)
    outcome = FileOutcome(
        job.path,
        result.status,
        changed=result.changed,
        rules=result.rules,
        todos=result.todos,
        errors=[result.error] if result.error else [],
    )
    if result.error is not None:
        return outcome
    if job.mode == DIFF and result.changed:
        outcome.diff = "".join(
            difflib.unified_diff(
                source.splitlines(keepends=True),
                result.output.splitlines(keepends=True),
                fromfile=f"a/{job.path}",
                tofile=f"b/{job.path}",
            )
        )
    if job.mode == WRITE and job.dest is not None:
        if job.dest != job.path or result.changed:
            try:
                atomic_write(job.dest, result.output.encode(encoding), like=job.path)
            except (OSError, UnicodeEncodeError) as exc:
                outcome.status = ERROR
                outcome.errors.append(Finding("E004", 0, f"cannot write {job.dest}: {exc}"))
                return outcome
            outcome.written_to = job.dest
    return outcome


def run(
    paths: list[str],
    *,
    mode: str = WRITE,
    options: Options = Options(),
    out_dir: str | None = None,
    jobs: int = 1,
) -> list[FileOutcome]:
    files = discover(paths)
    work = []
    for path, root in files:
        dest: str | None = path if mode == WRITE else None
        if mode == WRITE and out_dir is not None:
            dest = os.path.join(out_dir, os.path.relpath(path, root))
        work.append(Job(path, dest, mode, options))
    if out_dir is not None and mode == WRITE:
        _copy_other_files(paths, out_dir)
    if jobs > 1 and len(work) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(run_job, work, chunksize=max(1, len(work) // (jobs * 8))))
    return [run_job(job) for job in work]


def _copy_other_files(paths: list[str], out_dir: str) -> None:
    """--out-dir writes a complete tree: non-Python files are copied as they are."""
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS]
            for name in filenames:
                if name.endswith((".py", ".pyc")):
                    continue
                src = Path(dirpath, name)
                dst = Path(out_dir, os.path.relpath(src, root))
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


def summarize(outcomes: list[FileOutcome]) -> dict:
    counts = {MIGRATED: 0, UNCHANGED: 0, TODO: 0, ERROR: 0}
    by_rule: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] += 1
        for todo in outcome.todos:
            by_rule[todo.code] = by_rule.get(todo.code, 0) + 1
    return {
        "files": len(outcomes),
        "changed": sum(1 for o in outcomes if o.changed),
        **counts,
        "todos": sum(by_rule.values()),
        "todos_by_rule": dict(sorted(by_rule.items())),
    }


def report_json(outcomes: list[FileOutcome], *, target: str, mode: str) -> str:
    return json.dumps(
        {
            "tool": "tfmigrate",
            "version": __version__,
            "target": target,
            "mode": mode,
            "summary": summarize(outcomes),
            "files": [o.as_dict() for o in outcomes],
        },
        indent=2,
    )


def exit_code(outcomes: list[FileOutcome]) -> int:
    """0: nothing left to do; 1: files changed (or would) or TODOs remain; 2: a file failed."""
    if any(o.status == ERROR for o in outcomes):
        return 2
    if any(o.changed or o.todos for o in outcomes):
        return 1
    return 0
