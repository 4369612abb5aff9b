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
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__
from .config import PathFilter
from .engine import ERROR, MIGRATED, TODO, UNCHANGED, Finding, Options, transform_source
from .notebook import transform_notebook
from .registry import all_rules

WRITE, DIFF, CHECK = "write", "diff", "check"
SOURCE_SUFFIXES = (".py", ".ipynb")


@dataclass
class FileOutcome:
    """One file's result. Lines refer to the file as it is on disk after the run: the migrated file
    in write mode (TODOs, unsafe fixes), the untouched source under --check/--diff; `changes` are
    always lines of the source (what was, or would be, rewritten). Notebook findings carry `cell`.
    """

    path: str
    status: str
    changed: bool = False
    rules: list[str] = field(default_factory=list)
    todos: list[Finding] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)
    diff: str = ""
    written_to: str | None = None
    changes: list[Finding] = field(default_factory=list)
    unsafe_fixes: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    notebook: bool = False

    def as_dict(self) -> dict:
        out = {
            "path": self.path,
            "status": self.status,
            "changed": self.changed,
            "rules": self.rules,
            "todos": [t.as_dict() for t in self.todos],
            "errors": [e.as_dict() for e in self.errors],
            "changes": [c.as_dict() for c in self.changes],
            "unsafe_fixes": [u.as_dict() for u in self.unsafe_fixes],
            "warnings": [w.as_dict() for w in self.warnings],
        }
        if self.notebook:
            out["kind"] = "notebook"
        return out


@dataclass(frozen=True)
class Job:
    path: str
    dest: str | None  # where to write: the file itself, an --out-dir copy, or None (diff/check)
    mode: str
    options: Options
    changes: bool = True  # work out which rule changed which line (`FileOutcome.changes`)


def discover(
    paths: list[str], path_filter: PathFilter | None = None, *, force_exclude: bool = False
) -> list[tuple[str, str]]:
    """(file, root) pairs for every .py/.ipynb file under `paths`, sorted, skipping excluded paths and venvs.

    A file named on the command line is taken whatever its name, unless `force_exclude` and it
    matches an exclude pattern (what a pre-commit hook wants: the hook passes every staged file).
    """
    path_filter = path_filter or PathFilter()
    found: list[tuple[str, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if not (force_exclude and path_filter.excluded(path)):
                found.append((str(path), str(path.parent)))
            continue
        if not path.is_dir():
            raise FileNotFoundError(f"{raw}: no such file or directory")
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not _skip_dir(Path(dirpath, d), path_filter))
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES) and not path_filter.excluded(Path(dirpath, name)):
                    found.append((str(Path(dirpath, name)), str(path)))
    seen: set[str] = set()
    unique = []
    for item in found:
        key = os.path.realpath(item[0])
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _skip_dir(path: Path, path_filter: PathFilter) -> bool:
    return path_filter.excluded(path) or (path / "pyvenv.cfg").exists()


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
    """One file's outcome; whatever goes wrong inside is that file's error (E999), never the run's."""
    try:
        return _run_job(job)
    except Exception as exc:  # noqa: BLE001 - per-file isolation
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return FileOutcome(job.path, ERROR, errors=[Finding("E999", 0, f"internal error: {detail}")], notebook=_is_notebook(job.path))


def _is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")


def _run_job(job: Job) -> FileOutcome:
    notebook = _is_notebook(job.path)
    try:
        with open(job.path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileOutcome(job.path, ERROR, errors=[Finding("E002", 0, f"cannot read: {exc.strerror}")], notebook=notebook)
    try:
        source, encoding = (data.decode("utf-8-sig"), "utf-8") if notebook else decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return FileOutcome(job.path, ERROR, errors=[Finding("E003", 0, f"cannot decode: {exc}")], notebook=notebook)
    if notebook:
        result = transform_notebook(source, filename=job.path, options=job.options)
        warnings = result.warnings
    else:
        result = transform_source(source, filename=job.path, options=job.options)  # type: ignore[assignment]
        warnings = []
    outcome = FileOutcome(
        job.path,
        result.status,
        changed=result.changed,
        rules=result.rules,
        todos=result.todos if job.mode == WRITE else result.todos_in_source,
        errors=[result.error] if result.error else [],
        changes=result.changes if job.changes else [],
        unsafe_fixes=result.unsafe_fixes_in_output if job.mode == WRITE else result.unsafe_fixes,
        warnings=warnings,
        notebook=notebook,
    )
    if result.error is not None:
        return outcome
    if job.mode == DIFF and result.changed:
        if notebook:
            outcome.diff = result.diff(job.path)  # type: ignore[attr-defined]
        else:
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


def plan(
    paths: list[str],
    *,
    mode: str = WRITE,
    options: Options = Options(),
    out_dir: str | None = None,
    path_filter: PathFilter | None = None,
    force_exclude: bool = False,
    changes: bool = True,
) -> list[Job]:
    """One job per discovered file, with the file's own rule selection (per-file-ignores).

    `changes=False`: nothing will read `FileOutcome.changes` (left empty), so the per-rule line
    diffs are never computed."""
    path_filter = path_filter or PathFilter()
    work = []
    for path, root in discover(paths, path_filter, force_exclude=force_exclude):
        dest: str | None = path if mode == WRITE else None
        if mode == WRITE and out_dir is not None:
            dest = os.path.join(out_dir, os.path.relpath(path, root))
        work.append(Job(path, dest, mode, _file_options(options, path_filter.ignored_codes(path)), changes))
    return work


def _file_options(options: Options, ignored: frozenset[str]) -> Options:
    if not ignored:
        return options
    selected = options.select if options.select is not None else frozenset(r.CODE for r in all_rules())
    return replace(options, select=frozenset(selected - ignored))


def execute(work: list[Job], *, jobs: int = 1, on_result: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Run the jobs (in a process pool when jobs > 1); the outcomes come back in the jobs' order,
    and `on_result` sees each as it finishes."""
    results: Iterable[FileOutcome]
    if jobs > 1 and len(work) > 1:
        # Largest files first, in small chunks, so that no worker is left with a big file at the
        # end while the others wait; the outcomes go back into the jobs' order.
        order = sorted(range(len(work)), key=lambda index: -_size(work[index].path))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = pool.map(run_job, [work[index] for index in order], chunksize=max(1, len(work) // (jobs * 32)))
            done = _collect(results, on_result)
        out: list[FileOutcome] = [None] * len(work)  # type: ignore[list-item]
        for index, outcome in zip(order, done):
            out[index] = outcome
        return out
    return _collect(map(run_job, work), on_result)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _collect(results: Iterable[FileOutcome], on_result: Callable[[FileOutcome], None] | None) -> list[FileOutcome]:
    out = []
    for outcome in results:
        out.append(outcome)
        if on_result is not None:
            on_result(outcome)
    return out


def run(
    paths: list[str],
    *,
    mode: str = WRITE,
    options: Options = Options(),
    out_dir: str | None = None,
    jobs: int = 1,
    path_filter: PathFilter | None = None,
    force_exclude: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[FileOutcome], None] | None = None,
    changes: bool = True,
) -> list[FileOutcome]:
    path_filter = path_filter or PathFilter()
    work = plan(
        paths, mode=mode, options=options, out_dir=out_dir, path_filter=path_filter, force_exclude=force_exclude, changes=changes
    )
    if out_dir is not None and mode == WRITE:
        _copy_other_files(paths, out_dir, {job.path for job in work}, path_filter)
    if on_start is not None:
        on_start(len(work))
    return execute(work, jobs=jobs, on_result=on_result)


def _copy_other_files(paths: list[str], out_dir: str, migrated: set[str], path_filter: PathFilter) -> None:
    """--out-dir writes a complete tree: every other file (an excluded .py included) is copied as it is."""
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not _skip_dir(Path(dirpath, d), path_filter)]
            for name in filenames:
                src = Path(dirpath, name)
                if name.endswith(".pyc") or str(src) in migrated:
                    continue
                dst = Path(out_dir, os.path.relpath(src, root))
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


def summarize(outcomes: list[FileOutcome]) -> dict:
    counts = {MIGRATED: 0, UNCHANGED: 0, TODO: 0, ERROR: 0}
    by_rule: dict[str, int] = {}
    unsafe_by_rule: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] += 1
        for todo in outcome.todos:
            by_rule[todo.code] = by_rule.get(todo.code, 0) + 1
        for fix in outcome.unsafe_fixes:
            unsafe_by_rule[fix.code] = unsafe_by_rule.get(fix.code, 0) + 1
    changed = sum(1 for o in outcomes if o.changed)
    return {
        "files": len(outcomes),
        "changed": changed,
        "not_changed": sum(1 for o in outcomes if not o.changed and o.status != ERROR),
        **counts,
        "todos": sum(by_rule.values()),
        "todos_by_rule": dict(sorted(by_rule.items())),
        "unsafe_fixes": sum(unsafe_by_rule.values()),
        "unsafe_fixes_by_rule": dict(sorted(unsafe_by_rule.items())),
        "warnings": sum(len(o.warnings) for o in outcomes),
    }


def report_json(outcomes: list[FileOutcome], *, target: str, mode: str, config: str | None = None, safe_only: bool = False) -> str:
    return json.dumps(
        {
            "tool": "tfmigrate",
            "version": __version__,
            "target": target,
            "mode": mode,
            "safe_only": safe_only,
            "config": config,
            "summary": summarize(outcomes),
            "files": [o.as_dict() for o in outcomes],
        },
        indent=2,
    )


def exit_code(outcomes: list[FileOutcome]) -> int:
    """0: nothing left to do; 1: files changed (or would), or TODOs, unsafe fixes or skipped cells remain; 2: a file failed."""
    if any(o.status == ERROR for o in outcomes):
        return 2
    if any(o.changed or o.todos or o.unsafe_fixes or o.warnings for o in outcomes):
        return 1
    return 0
