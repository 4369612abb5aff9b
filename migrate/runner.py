"""Files in, results out: discovery, decoding, atomic writes, parallel jobs and the report."""

from __future__ import annotations

import difflib
import gc
import io
import json
import os
import shutil
import signal
import threading
import tokenize
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__
from .config import PathFilter
from .discovery import SOURCE_SUFFIXES, Discovery, discover, discover_all  # noqa: F401 - re-exported
from .engine import Options, transform_source
from .results import ERROR, MIGRATED, TODO, UNCHANGED, Finding
from .exports import importers_of, module_name, module_reads, names_read_from, program_tails
from .program_keras import keras_side, tf1_keras_modules
from .gcpause import cyclic_gc_paused
from .parsing import parse, parses_held
from .tf1_program import is_tf1_project
from .fileio import FileChanged, NotRegularFile, atomic_write, read_source, replace_file  # noqa: F401
from .notebook import transform_notebook
from .registry import all_rules
from .hosted import HOSTED_CANNED
from .tiers import GRAPH, IDIOMATIC, NOT_MIGRATED, STRATEGY, TIERS

WRITE, DIFF, CHECK = "write", "diff", "check"
DEFAULT_TIMEOUT = 60.0  # seconds one file may take before it is reported as too complex (E009)


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
    estimators: list[dict] = field(default_factory=list)  # each estimator site's tier (`tiers`)
    lines: int = 0  # the source's line count (for the closing lines/s figure; not in the report)
    # A module of a program (`Job.program`), migrated before the run knew what the others import
    # from it: what it imports from them (`exports.module_reads`), the names its rules asked about,
    # and, while one of those may turn out imported, the output it holds back (text, encoding, snapshot).
    reads: list = field(default_factory=list, repr=False, compare=False)
    asked: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)
    held: tuple | None = field(default=None, repr=False, compare=False)
    # Which Keras the module's migration runs (`program_keras.keras_side`), and whether it is
    # Keras code alone, whose Keras its importers decide (`TransformResult.keras_module`).
    keras: str | None = field(default=None, repr=False, compare=False)
    keras_module: bool = field(default=False, repr=False, compare=False)
    # What the module is to TFM104's switch (`TransformResult.graph_role`): an "entry" is settled
    # once the run knows whether its imports reach a "library"'s Session code.
    graph_role: str | None = field(default=None, repr=False, compare=False)

    @property
    def unsettled(self) -> bool:
        """Migrated before the run knew what the program's other modules import from it, or how they run it."""
        return bool(self.asked) or self.keras_module or self.graph_role == "entry"

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
            "estimators": self.estimators,
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
    timeout: float | None = DEFAULT_TIMEOUT  # E009 past this many seconds (None: no limit)
    program: ProgramModule | None = None  # one module of several: `execute` settles its exports


@dataclass(frozen=True)
class ProgramModule:
    """A module of the program a run migrates: its dotted name and every name the program's
    modules go by (`exports.program_tails`)."""

    name: str
    tails: frozenset[str]


def decode(data: bytes) -> tuple[str, str]:
    """Text and encoding of a Python source file (PEP 263 cookie, BOM); raises UnicodeDecodeError/SyntaxError."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def _decode_error(data: bytes, exc: Exception) -> str:
    """E003's message: where decoding failed, and a hint when the bytes look like UTF-16/32."""
    if isinstance(exc, UnicodeDecodeError):
        line = data.count(b"\n", 0, exc.start) + 1
        message = f"cannot decode: invalid {exc.encoding} at byte {exc.start} (line {line}): {exc.reason}"
    else:
        message = f"cannot decode: {exc}"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or data[:200].count(b"\0") > len(data[:200]) // 4:
        message += " (the file looks like UTF-16 or UTF-32; save it as UTF-8)"
    return message


class TooComplex(BaseException):
    """The file took longer than its time limit (BaseException: no `except Exception` in the
    engine may swallow it)."""


@contextmanager
def time_limit(seconds: float | None):
    """Raise TooComplex in this thread after `seconds` (SIGALRM: the main thread of this process,
    which is where a -j 1 run and every pool worker run their jobs)."""
    usable = seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def expired(_signum, _frame):
        raise TooComplex

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_job(job: Job) -> FileOutcome:
    """One file's outcome; whatever goes wrong inside is that file's error (E999), never the run's."""
    try:
        return _run_job(job)
    except Exception as exc:  # noqa: BLE001 - per-file isolation
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return _failed(job.path, "E999", f"internal error: {detail}")


def _failed(path: str, code: str, message: str, line: int = 0) -> FileOutcome:
    return FileOutcome(path, ERROR, errors=[Finding(code, line, message)], notebook=_is_notebook(path))


def _is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")


def _run_job(job: Job) -> FileOutcome:
    try:
        snap = read_source(job.path)
    except OSError as exc:
        return _failed(job.path, "E002", f"cannot read: {exc.strerror or exc}")
    if job.program is None:
        return _migrate(job, snap)
    # What this module imports from the others, read from its text as `Path.read_text` gives it
    # (parsed and walked once for this and the migration when that is the text migrated). One
    # pause of the collector for both: the tree dies after them, unwalked by it.
    text = snap.data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    with cyclic_gc_paused(), parses_held():
        outcome = _migrate(job, snap)
        reads = module_reads(job.program.name, text, job.program.tails, parse)
    outcome.reads = reads
    return outcome


def _migrate(job: Job, snap) -> FileOutcome:
    notebook = _is_notebook(job.path)
    data = snap.data
    try:
        source, encoding = (data.decode("utf-8-sig"), "utf-8") if notebook else decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return _failed(job.path, "E003", _decode_error(data, exc))
    try:
        with time_limit(job.timeout):
            if notebook:
                result = transform_notebook(source, filename=job.path, options=job.options, locate=job.changes or job.mode != WRITE)
                warnings = result.warnings
            else:
                result = transform_source(source, filename=job.path, options=job.options)  # type: ignore[assignment]
                warnings = []
            changes = result.changes if job.changes else []
    except TooComplex:
        return _failed(job.path, "E009", f"too complex to migrate within {job.timeout:g} s (the `timeout` setting)")
    outcome = FileOutcome(
        job.path,
        result.status,
        changed=result.changed,
        rules=result.rules,
        todos=result.todos if job.mode == WRITE else result.todos_in_source,
        errors=[result.error] if result.error else [],
        changes=changes,
        unsafe_fixes=result.unsafe_fixes_in_output if job.mode == WRITE else result.unsafe_fixes,
        warnings=warnings,
        notebook=notebook,
        lines=source.count("\n") + (not source.endswith("\n") and bool(source)),
    )
    if job.program is not None:
        outcome.asked, outcome.keras_module = result.asked, getattr(result, "keras_module", False)
        outcome.graph_role = getattr(result, "graph_role", None)
    if result.error is not None:
        return outcome
    if job.program is not None and not notebook:
        outcome.keras = keras_side(result)
    sites = list(getattr(result, "estimators", ()))  # (notebooks: none reported)
    for site in sites:
        line = result.output_line(site["line"]) if job.mode == WRITE else site["line"]
        outcome.estimators.append({**site, "line": line})
    if changes and sites:
        outcome.changes = [_tier_change(change, sites) for change in changes]
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
    if job.mode == WRITE and job.dest is not None and (job.dest != job.path or result.changed):
        if outcome.unsettled:
            outcome.held = (result.output, encoding, snap)  # `execute` writes it, or migrates again
            return outcome
        return _write(job, outcome, result.output, encoding, snap)
    return outcome


def _write(job: Job, outcome: FileOutcome, text: str, encoding: str, snap) -> FileOutcome:
    """Write the migrated text to `job.dest` (only if the source is still as it was read)."""
    try:
        output = text.encode(encoding)
        if job.dest == job.path:
            replace_file(job.path, output, snap)
        else:
            atomic_write(job.dest, output, like=job.path)
    except FileChanged:
        outcome.status, outcome.todos, outcome.unsafe_fixes = ERROR, [], []
        outcome.errors.append(Finding("E007", 0, "changed during migration; left as it is now (run tfmigrate again)"))
        return outcome
    except (OSError, UnicodeEncodeError) as exc:
        outcome.status = ERROR
        outcome.errors.append(Finding("E004", 0, f"cannot write {job.dest}: {exc}"))
        return outcome
    outcome.written_to = job.dest
    return outcome


def tier_text(site: dict) -> str:
    """What becomes of an estimator site (`tiers.classify`): `TPUEstimator -> Keras model (idiomatic tier)`."""
    estimator, tier = site["estimator"], site["tier"]
    if tier == IDIOMATIC:
        return f"{estimator} -> Keras model (idiomatic tier)"
    if tier == STRATEGY and estimator in HOSTED_CANNED:
        return f"{estimator} -> tfm.estimator's canned Keras model (strategy tier)"
    if tier == STRATEGY:
        return f"{estimator} -> tfm.estimator, model_fn as written, in TF2 (strategy tier)"
    if tier == GRAPH:
        why = "; ".join(site.get("graph_mode", ()))
        return f"{estimator} -> tfm.estimator, model_fn as written, in TF1 graph mode (graph tier: {why})"
    return f"{estimator} left as it is (not migrated)"


def _tier_change(change: Finding, sites: list[dict]) -> Finding:
    """A structural rule's change, said in terms of what becomes of the estimator it serves: the
    site's own lines, else (model_fn, input_fn, hooks) the first site the file migrates."""
    rule = _RULES_BY_CODE().get(change.code)
    if rule is None or not rule.STRUCTURAL:
        return change
    end = change.end_line or change.line
    inside = [s for s in sites if change.line <= s["line"] <= end]
    if inside:
        return replace(change, message="; ".join(dict.fromkeys(tier_text(s) for s in inside)))
    if change.message != rule.SUMMARY:
        return change
    migrated = [s for s in sites if s["tier"] != NOT_MIGRATED]
    if not migrated:
        return change
    site = migrated[0]
    return replace(change, message=f"(for line {site['line']}) {tier_text(site)}")


def _RULES_BY_CODE() -> dict:
    return {rule.CODE: rule for rule in all_rules()}


class OutDirCollision(ValueError):
    """Two sources would be written to the same --out-dir file."""


def plan(
    paths: list[str],
    *,
    mode: str = WRITE,
    options: Options = Options(),
    out_dir: str | None = None,
    path_filter: PathFilter | None = None,
    force_exclude: bool = False,
    changes: bool = True,
    timeout: float | None = DEFAULT_TIMEOUT,
    found: Discovery | None = None,
    jobs: int = 1,
) -> list[Job]:
    """One job per discovered file, with the file's own rule selection (per-file-ignores).

    `changes=False`: nothing will read `FileOutcome.changes` (left empty), so the per-rule line
    diffs are never computed. Raises OutDirCollision before anything is written."""
    path_filter = path_filter or PathFilter()
    found = found or discover_all(paths, path_filter, force_exclude=force_exclude)
    work = []
    dests: dict[str, str] = {}
    modules = {path: module_name(path, root) for path, root in found.files if path.endswith(".py")}
    # Several modules are one program: each job also reads what its module imports from the
    # others, and `execute` settles the names each module exports once all have been read.
    tails = program_tails(modules.values()) if len(modules) > 1 else None
    for path, root in found.files:
        dest: str | None = path if mode == WRITE else None
        if mode == WRITE and out_dir is not None:
            dest = os.path.join(out_dir, os.path.relpath(path, root))
            key = os.path.normcase(os.path.abspath(dest))
            if key in dests:
                raise OutDirCollision(f"--out-dir: {dests[key]} and {path} would both be written to {dest}")
            dests[key] = path
        file_options = _file_options(options, path_filter.ignored_codes(path))
        program = ProgramModule(modules[path], tails) if tails is not None and path in modules else None
        work.append(Job(path, dest, mode, file_options, changes, timeout, program))
    return work


def _file_options(options: Options, ignored: frozenset[str]) -> Options:
    if not ignored:
        return options
    selected = options.select if options.select is not None else frozenset(r.CODE for r in all_rules())
    return replace(options, select=frozenset(selected - ignored))


class Interrupted(Exception):
    """Ctrl-C: `outcomes` are the files finished (and written) before it."""

    def __init__(self, outcomes: list[FileOutcome]) -> None:
        super().__init__("interrupted")
        self.outcomes = outcomes


def execute(work: list[Job], *, jobs: int = 1, on_result: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Run the jobs (in a process pool when jobs > 1); the outcomes come back in the jobs' order,
    and `on_result` sees each as it finishes. Ctrl-C raises Interrupted with what finished.

    The modules of a program are migrated before the run knows which of their names the others
    import, or how they run it; one whose rules asked about a name (to delete it as unused here,
    say), or a module of Keras code alone, is settled once every module has been read: written as
    it is, or migrated again where that name is imported or its importers run TF 1.x's Keras."""

    def report(outcome: FileOutcome) -> None:
        if on_result is not None and not outcome.unsettled:
            on_result(outcome)

    try:
        outcomes = _execute_pool(work, jobs, report) if jobs > 1 and len(work) > 1 else _execute_serial(work, report)
    except Interrupted as exc:
        raise Interrupted([outcome for outcome in exc.outcomes if not outcome.unsettled]) from None
    if any(job.program is not None for job in work):
        _settle(work, outcomes, on_result)
    return outcomes


def _execute_serial(work: list[Job], on_result: Callable[[FileOutcome], None]) -> list[FileOutcome]:
    done: list[FileOutcome] = []
    try:
        for job in work:
            done.append(run_job(job))
            on_result(done[-1])
    except KeyboardInterrupt:
        raise Interrupted(done) from None
    return done


def _settle(work: list[Job], outcomes: list[FileOutcome], on_result: Callable[[FileOutcome], None] | None) -> None:
    """Each program module migrated before the run knew the rest: written as migrated, or
    migrated again knowing which of its names the other modules import (where its rules asked
    about one of them) and, for a module of Keras code alone, that a module importing it runs
    its Keras in a TF1 graph (`program_keras.tf1_keras_modules`), and, for a TF 1.x main module,
    that its imports reach another module's Session code (`graph_entries`)."""
    names = [job.program.name for job in work if job.program is not None]
    reads = [read for outcome in outcomes for read in outcome.reads]
    exported = names_read_from(names, reads)
    modules = [(job.program.name, outcome.keras, outcome.keras_module) for job, outcome in zip(work, outcomes) if job.program is not None]
    alone = any(keras_alone for *_, keras_alone in modules)
    roles = {job.program.name: outcome.graph_role for job, outcome in zip(work, outcomes) if job.program is not None}
    tf1_keras = tf1_keras_modules(modules, importers_of(names, reads)) if alone else set()
    entries: set[str] = set()
    if "entry" in roles.values() and "library" in roles.values():
        eager = {job.program.name for job, outcome in zip(work, outcomes)
                 if job.program is not None and (outcome.keras == "keras3" or outcome.estimators)}
        entries = graph_entries(roles, importers_of(names, reads, unique=True), eager)
    try:
        for index, (job, outcome) in enumerate(zip(work, outcomes)):
            if job.program is None or not outcome.unsettled:
                continue
            wanted = exported.get(job.program.name, frozenset())
            graph_keras = job.program.name in tf1_keras
            graph_entry = job.program.name in entries
            if outcome.asked & wanted or graph_keras or graph_entry:
                options = replace(job.options, exported=wanted, graph_keras=graph_keras, graph_entry=graph_entry)
                outcome = run_job(replace(job, options=options, program=None))
            elif outcome.held is not None:
                outcome = _write(job, outcome, *outcome.held)
            outcome.held, outcome.asked, outcome.keras_module, outcome.graph_role = None, frozenset(), False, None
            outcomes[index] = outcome
            if on_result is not None:
                on_result(outcome)
    except KeyboardInterrupt:
        raise Interrupted([outcome for outcome in outcomes if not outcome.unsettled]) from None


def graph_entries(roles: dict[str, str | None], importers: dict[str, set[str]], eager: set[str]) -> set[str]:
    """The program's "entry" modules whose imports reach a "library" module's Session code (the
    modules' `graph_role`s; `importers`: module name -> the modules importing it): TF 1.x ran the
    library's graphs in graph mode, which the entry now turns on for it. Not an entry whose imports
    reach an `eager` module too (Keras 3 code, an estimator: the runtime runs those in TF2)."""
    imports: dict[str, set[str]] = {}
    for module, by in importers.items():
        for importer in by:
            imports.setdefault(importer, set()).add(module)
    out = set()
    for name, role in roles.items():
        if role != "entry":
            continue
        reached, stack = set(), [name]
        while stack:
            for module in imports.get(stack.pop(), ()):
                if module not in reached:
                    reached.add(module)
                    stack.append(module)
        if any(roles.get(module) == "library" for module in reached) and not reached & eager:
            out.add(name)
    return out


def _execute_pool(work: list[Job], jobs: int, on_result: Callable[[FileOutcome], None] | None) -> list[FileOutcome]:
    # Largest files first, in small chunks, so that no worker is left with a big file at the end
    # while the others wait; the outcomes go back into the jobs' order.
    order = sorted(range(len(work)), key=lambda index: -_size(work[index].path))
    size = max(1, len(work) // (jobs * 32))
    chunks = [order[i : i + size] for i in range(0, len(order), size)]
    out: list[FileOutcome | None] = [None] * len(work)
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init, initargs=(os.getpid(),))
    futures: list[Future] = []
    try:
        # The workers are forks of this process. What they inherit is frozen out of their garbage
        # collection: a caller's objects whose finalizers must not run in a fork (TensorFlow's
        # functions, in a process that imported it: a test run, a notebook) segfaulted a worker
        # when its first collection found them.
        gc.freeze()
        try:
            futures = [pool.submit(_run_chunk, [work[i] for i in chunk]) for chunk in chunks]
        finally:
            gc.unfreeze()
        for chunk, future in zip(chunks, futures):
            try:
                outcomes = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died (killed, out of memory)
                outcomes = [_failed(work[i].path, "E999", f"internal error: worker failed: {type(exc).__name__}") for i in chunk]
            for index, outcome in zip(chunk, outcomes):
                out[index] = outcome
                if on_result is not None:
                    on_result(outcome)
    except KeyboardInterrupt:
        # Chunks already running finish (each file is written whole or not at all); the rest never start.
        pool.shutdown(wait=True, cancel_futures=True)
        for chunk, future in zip(chunks, futures):
            if future.done() and not future.cancelled() and future.exception() is None:
                for index, outcome in zip(chunk, future.result()):
                    out[index] = outcome
        raise Interrupted([o for o in out if o is not None]) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return out  # type: ignore[return-value]


def _run_chunk(chunk: list[Job]) -> list[FileOutcome]:
    return [run_job(job) for job in chunk]


def _worker_init(parent: int) -> None:
    """A pool worker: Ctrl-C is the parent's to handle, and the worker dies with its parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # Linux: the kernel sends SIGKILL when the parent dies
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:  # elsewhere (and as a backstop): poll for the parent
        import time

        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:
        os._exit(1)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


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
    timeout: float | None = DEFAULT_TIMEOUT,
    found: Discovery | None = None,
) -> list[FileOutcome]:
    """Outcomes for the discovered files, after one E002 outcome per path that could not be read."""
    path_filter = path_filter or PathFilter()
    found = found or discover_all(paths, path_filter, force_exclude=force_exclude)
    if not options.tf1_program and is_tf1_project(_texts(file for file, _ in found.files)):
        options = replace(options, tf1_program=True)  # one program: TF 1.x if any file is
    work = plan(
        paths, mode=mode, options=options, out_dir=out_dir, path_filter=path_filter, force_exclude=force_exclude,
        changes=changes, timeout=timeout, found=found, jobs=jobs,
    )
    unreadable = [_failed(path, "E002", message) for path, message in found.errors]
    if out_dir is not None and mode == WRITE:
        _copy_other_files(paths, out_dir, {job.path for job in work}, path_filter)
    if on_start is not None:
        on_start(len(work))
    try:
        return unreadable + execute(work, jobs=jobs, on_result=on_result)
    except Interrupted as exc:
        raise Interrupted(unreadable + exc.outcomes) from None


def _texts(files: Iterable[str]) -> Iterator[str]:
    for file in files:
        if file.endswith(".py") and os.path.isfile(file):
            try:
                yield Path(file).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue


def _copy_other_files(paths: list[str], out_dir: str, migrated: set[str], path_filter: PathFilter) -> None:
    """--out-dir writes a complete tree: every other file (an excluded .py included) is copied as it is."""
    for raw in paths:
        root = Path(raw)
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not (path_filter.excluded(Path(dirpath, d), below=root) or os.path.exists(Path(dirpath, d, "pyvenv.cfg")))]
            for name in filenames:
                src = Path(dirpath, name)
                if name.endswith(".pyc") or str(src) in migrated or not src.is_file():
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
    by_tier = {tier: 0 for tier in TIERS}
    for outcome in outcomes:
        for site in outcome.estimators:
            by_tier[site["tier"]] += 1
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
        "estimators": by_tier,
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
