"""`tfmigrate PATH...`: a thin click front end over `tfmigrate.runner` (options in, exit code out)."""

from __future__ import annotations

import os
import sys
import time

import click

from . import __version__
from .config import ConfigError, find_config, load_config, path_filter
from .docs import DocsError, render_diagnostic, render_rule
from .engine import Options
from .registry import RegistryError, all_rules, expand_selection
from .report import Progress, display_path, error_lines, outcome_lines, statistics_lines, summary_lines, timing_line
from .runner import CHECK, DEFAULT_TIMEOUT, DIFF, WRITE, Interrupted, OutDirCollision, discover_all, exit_code, report_json, run
from .sarif import sarif_json


def _split(values: tuple[str, ...] | list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _list_rules() -> None:
    for rule in all_rules():
        safety = "safe" if rule.SAFE else "unsafe"
        kind = "structural" if rule.STRUCTURAL else "mechanical"
        click.echo(f"{rule.CODE}  {safety:<6}  {kind:<10}  {','.join(sorted(rule.TARGETS)):<9}  {rule.SUMMARY}")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--diff", "diff_mode", is_flag=True, help="Print unified diffs; write nothing.")
@click.option("--check", "check_mode", is_flag=True, help="Write nothing; list what would change; exit 1 if anything would change or TODOs remain.")
@click.option("--out-dir", type=click.Path(file_okay=False), help="Write migrated copies of the tree under DIR; sources stay untouched.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write a JSON report to FILE ('-' for stdout).")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Write a SARIF 2.1.0 log to FILE ('-' for stdout).")
@click.option("--target", type=click.Choice(["keras", "ctl"]), default=None, help="Output form: Keras compile/fit, or custom training loops [default: keras].")
@click.option("--standalone/--no-standalone", default=None, help="With --target ctl: loops that carry their host side instead of using the runtime's.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, help="Parallel jobs (0: one per CPU) [default: 1].")
@click.option("--timeout", type=click.FloatRange(min=0), default=None, help=f"Seconds one file may take before it is reported as too complex (0: no limit) [default: {DEFAULT_TIMEOUT:g}].")
@click.option("--select", multiple=True, help="Only these rule codes or prefixes (comma-separated).")
@click.option("--ignore", multiple=True, help="Skip these rule codes or prefixes (comma-separated).")
@click.option("--safe-only/--no-safe-only", default=None, help="Apply only safe rules; unsafe ones report what they would change.")
@click.option("--exclude", multiple=True, help="Globs to skip, replacing `exclude` (config or default); `extend-exclude` still applies.")
@click.option("--extend-exclude", multiple=True, help="Globs to skip, in addition (comma-separated).")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too (pre-commit).")
@click.option("--allow-no-paths", is_flag=True, help="With no PATH, succeed doing nothing (pre-commit may pass no files).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False), help="Read [tool.tfmigrate] from FILE instead of the nearest pyproject.toml.")
@click.option("--list-rules", is_flag=True, help="List the rules (code, safety, kind, targets, summary) and exit.")
@click.option("--explain", metavar="CODE", help="Explain one rule (a before/after example, when it declines and what to do) or an E/W code, and exit.")
@click.option("--statistics", is_flag=True, help="Count the diagnostics by code and message (most frequent first) instead of listing them.")
@click.option("-q", "--quiet", is_flag=True, help="Only print errors and the summary.")
@click.version_option(__version__, prog_name="tfmigrate")
def main(
    paths, diff_mode, check_mode, out_dir, report_path, sarif_path, target, standalone, jobs, timeout, select, ignore, safe_only,
    exclude, extend_exclude, force_exclude, allow_no_paths, config_path, list_rules, explain, statistics, quiet,
):
    """Migrate TF1 Estimator/TPUEstimator programs (.py, .ipynb) under PATHS to TF2."""
    # (Over 100 lines on purpose: click hands every option to this one function, which reads as
    # the command's own outline: config, the info modes, the run, the reports, the exit code.)
    try:
        rules = all_rules()
    except RegistryError as exc:
        raise click.UsageError(str(exc)) from exc
    if list_rules:
        _list_rules()
        return
    if explain:
        for rule in rules:
            if rule.CODE == explain.upper():
                try:
                    click.echo(render_rule(rule))
                except DocsError as exc:
                    raise click.ClickException(str(exc)) from exc
                return
        diagnostic = render_diagnostic(explain)
        if diagnostic is not None:
            click.echo(diagnostic)
            return
        raise click.UsageError(f"unknown rule or code {explain!r}")
    if not paths:
        if allow_no_paths:
            return
        raise click.UsageError("no PATH given")
    try:
        config = load_config(config_path or find_config(paths[0]))
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc

    target = target or config.target or "keras"
    jobs = jobs if jobs is not None else config.jobs if config.jobs is not None else 1
    safe_only = safe_only if safe_only is not None else bool(config.safe_only)
    if standalone and target != "ctl":  # the flag itself; a config's `standalone` is just carried
        raise click.UsageError("--standalone applies to --target ctl only")
    standalone = standalone if standalone is not None else bool(config.standalone)
    try:
        selected = expand_selection(_split(select) if select else _split(config.select))
        ignored = _split(ignore) if ignore else _split(config.ignore)
        selected -= expand_selection(ignored) if ignored else set()
    except RegistryError as exc:
        raise click.UsageError(str(exc)) from exc
    if diff_mode and check_mode:
        raise click.UsageError("--diff and --check are exclusive")
    if out_dir and (diff_mode or check_mode):
        raise click.UsageError("--out-dir writes files; it cannot be combined with --diff/--check")
    if out_dir and os.path.isdir(out_dir) and os.listdir(out_dir):
        raise click.UsageError(f"--out-dir {out_dir} exists and is not empty")
    _check_outputs(report_path, sarif_path)
    timeout = timeout if timeout is not None else config.timeout if config.timeout is not None else DEFAULT_TIMEOUT
    mode = DIFF if diff_mode else CHECK if check_mode else WRITE
    options = Options(target=target, select=frozenset(selected), safe_only=safe_only, standalone=standalone)
    filters = path_filter(config, tuple(_split(exclude)) if exclude else None, tuple(_split(extend_exclude) or ()))
    try:
        found = discover_all(list(paths), filters, force_exclude=force_exclude)
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    except KeyboardInterrupt:
        _interrupted([])
    if not quiet:
        for note in found.notes:
            click.echo(note, err=True)
    progress = Progress(sys.stderr, enabled=Progress.wanted(sys.stderr, quiet=quiet))
    started = time.perf_counter()
    try:
        outcomes = run(
            list(paths),
            mode=mode,
            options=options,
            out_dir=out_dir,
            jobs=jobs if jobs > 0 else (os.cpu_count() or 1),
            path_filter=filters,
            force_exclude=force_exclude,
            on_start=progress.start,
            on_result=progress.advance,
            # Which rule changed which line: printed by --check/--diff, in the JSON report and SARIF.
            changes=bool(report_path) or (mode != WRITE and (not quiet or statistics or bool(sarif_path))),
            timeout=timeout or None,
            found=found,
        )
    except OutDirCollision as exc:
        raise click.UsageError(str(exc)) from exc
    except Interrupted as exc:
        progress.close()
        _interrupted(exc.outcomes)
    except KeyboardInterrupt:
        progress.close()
        _interrupted([])
    except Exception as exc:  # noqa: BLE001 - not one file's fault: say so, exit 2, no traceback
        progress.close()
        click.echo(f"tfmigrate: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(2)
    finally:
        progress.close()

    elapsed = time.perf_counter() - started
    # Diagnostics and the summary go to stdout (like ruff's), errors to stderr; stdout stays
    # machine-readable where it carries a diff or a report (`--diff`, `--report -`, `--sarif -`).
    human_err = mode == DIFF or report_path == "-" or sarif_path == "-"
    for outcome in outcomes:
        if outcome.diff:
            click.echo(outcome.diff, nl=False)
        for line in error_lines(outcome):
            click.echo(line, err=True)
        for line in outcome_lines(outcome, mode, quiet=quiet, statistics=statistics):
            click.echo(line, err=human_err)
    if statistics:
        for line in statistics_lines(outcomes, mode):
            click.echo(line, err=human_err)
    for line in summary_lines(outcomes, mode):
        click.echo(line, err=human_err)
    click.echo(timing_line(outcomes, elapsed), err=human_err)
    if report_path:
        config_name = str(config.path) if config.path is not None else None
        _emit(report_path, report_json(outcomes, target=target, mode=mode, config=config_name, safe_only=safe_only))
    if sarif_path:
        _emit(sarif_path, sarif_json(outcomes, mode=mode))
    sys.exit(exit_code(outcomes))


def _interrupted(outcomes) -> None:
    """Ctrl-C: which files were already written (each whole), then exit 130 like a shell."""
    written = [o for o in outcomes if o.written_to and o.changed]
    click.echo(f"tfmigrate: interrupted; {len(written)} file(s) already written:", err=True)
    for outcome in written:
        click.echo(f"  {display_path(outcome.written_to)}", err=True)
    sys.exit(130)


def _check_outputs(report_path: str | None, sarif_path: str | None) -> None:
    """Report destinations are checked before any file is touched."""
    if report_path == "-" and sarif_path == "-":
        raise click.UsageError("--report - and --sarif - cannot both write to stdout")
    for option, path in (("--report", report_path), ("--sarif", sarif_path)):
        if not path or path == "-":
            continue
        parent = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            raise click.UsageError(f"{option} {path}: is a directory")
        if not os.path.isdir(parent):
            raise click.UsageError(f"{option} {path}: directory {parent} does not exist")
        if not os.access(parent, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise click.UsageError(f"{option} {path}: not writable")


def _emit(path: str, text: str) -> None:
    if path == "-":
        click.echo(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        click.echo(f"tfmigrate: cannot write {path}: {exc.strerror or exc}", err=True)
        sys.exit(2)


def entry() -> None:
    """The `tfmigrate` command: `tfmigrate verify ...` proves a migration; anything else migrates."""
    if len(sys.argv) > 1 and sys.argv[1] == "verify":
        from .verify_cli import run_verify

        run_verify(sys.argv[2:])
    main()
