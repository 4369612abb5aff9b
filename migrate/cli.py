"""`tfmigrate PATH...`: a thin click front end over `tfmigrate.runner`."""

from __future__ import annotations

import inspect
import os
import sys

import click

from . import __version__
from .engine import Options
from .registry import RegistryError, all_rules, expand_selection
from .runner import CHECK, DIFF, WRITE, exit_code, report_json, run, summarize


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split(",") if part.strip()]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--diff", "diff_mode", is_flag=True, help="Print unified diffs; write nothing.")
@click.option("--check", "check_mode", is_flag=True, help="Write nothing; exit 1 if anything would change or TODOs remain.")
@click.option("--out-dir", type=click.Path(file_okay=False), help="Write migrated copies of the tree under DIR; sources stay untouched.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write a JSON report to FILE ('-' for stdout).")
@click.option("--target", type=click.Choice(["keras", "ctl"]), default="keras", show_default=True, help="Output form: Keras compile/fit, or custom training loops.")
@click.option("--standalone", is_flag=True, help="With --target ctl: loops that do not import tfmigrate.runtime where stock TF will do.")
@click.option("-j", "--jobs", type=int, default=1, show_default=True, help="Parallel jobs (0: one per CPU).")
@click.option("--select", multiple=True, help="Only these rule codes or prefixes (comma-separated).")
@click.option("--ignore", multiple=True, help="Skip these rule codes or prefixes (comma-separated).")
@click.option("--list-rules", is_flag=True, help="List the rules and exit.")
@click.option("--explain", metavar="CODE", help="Explain one rule and exit.")
@click.option("-q", "--quiet", is_flag=True, help="Only print errors and the summary line.")
@click.version_option(__version__, prog_name="tfmigrate")
def main(paths, diff_mode, check_mode, out_dir, report_path, target, standalone, jobs, select, ignore, list_rules, explain, quiet):
    """Migrate TF1 Estimator/TPUEstimator programs under PATHS to TF2."""
    try:
        rules = all_rules()
        selected = expand_selection(_split(select)) - (expand_selection(_split(ignore)) if ignore else set())
    except RegistryError as exc:
        raise click.UsageError(str(exc)) from exc
    if list_rules:
        for rule in rules:
            kind = "structural" if rule.STRUCTURAL else "mechanical"
            click.echo(f"{rule.CODE}  {rule.SUMMARY}  [{kind}]")
        return
    if explain:
        for rule in rules:
            if rule.CODE == explain.upper():
                click.echo(f"{rule.CODE} ({rule.__name__}): {rule.SUMMARY}\n")
                click.echo(inspect.cleandoc(rule.__doc__ or ""))
                return
        raise click.UsageError(f"unknown rule {explain!r}")
    if not paths:
        raise click.UsageError("no PATH given")
    if diff_mode and check_mode:
        raise click.UsageError("--diff and --check are exclusive")
    if standalone and target != "ctl":
        raise click.UsageError("--standalone applies to --target ctl only")
    if out_dir and (diff_mode or check_mode):
        raise click.UsageError("--out-dir writes files; it cannot be combined with --diff/--check")
    if out_dir and os.path.isdir(out_dir) and os.listdir(out_dir):
        raise click.UsageError(f"--out-dir {out_dir} exists and is not empty")
    mode = DIFF if diff_mode else CHECK if check_mode else WRITE
    try:
        outcomes = run(
            list(paths),
            mode=mode,
            options=Options(target=target, select=frozenset(selected), standalone=standalone),
            out_dir=out_dir,
            jobs=jobs if jobs > 0 else (os.cpu_count() or 1),
        )
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc

    for outcome in outcomes:
        if outcome.diff:
            click.echo(outcome.diff, nl=False)
        for error in outcome.errors:
            where = f"{outcome.path}:{error.line}" if error.line else outcome.path
            click.echo(f"{where}: error {error.code}: {error.message}", err=True)
        if not quiet:
            for todo in outcome.todos:
                click.echo(f"{outcome.path}:{todo.line}: {todo.code} {todo.message}", err=True)
            if mode == WRITE and outcome.written_to and outcome.changed:
                click.echo(f"migrated {outcome.path}" + (f" -> {outcome.written_to}" if outcome.written_to != outcome.path else ""), err=True)
            elif mode == CHECK and outcome.changed:
                click.echo(f"would migrate {outcome.path}", err=True)
    summary = summarize(outcomes)
    verb = "changed" if mode == WRITE else "would change"
    click.echo(
        f"tfmigrate: {summary['files']} files: {summary['changed']} {verb}, {summary[ 'todos']} TODOs left "
        f"in {summary['todo']} files, {summary['error']} failed.",
        err=True,
    )
    if report_path:
        text = report_json(outcomes, target=target, mode=mode)
        if report_path == "-":
            click.echo(text)
        else:
            with open(report_path, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
    sys.exit(exit_code(outcomes))
