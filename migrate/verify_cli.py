"""`tfmigrate verify ORIGINAL.py [MIGRATED.py] [-- ARGS]`: the equivalence proof as a command.

Exit codes: 0 every value agrees within `--rtol`, 1 some value differs (or the runs recorded
different results), 2 a run failed or could not be made (its last lines are shown).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .verify import VerifyError, as_json, table, verify


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("original", required=False, type=click.Path(exists=True, path_type=Path))
@click.argument("migrated", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("-m", "module", metavar="MODULE", help="Run MODULE as `python -m` would, from the project root ORIGINAL (default: .) and MIGRATED.")
@click.option("--rtol", type=float, default=1e-5, show_default=True, help="Relative tolerance for every value.")
@click.option("--target", type=click.Choice(["keras", "ctl"]), default="keras", help="Migrate this way when no MIGRATED is given.")
@click.option("--json", "as_json_output", is_flag=True, help="Print the comparison as JSON (for CI).")
@click.option("--logdir", type=click.Path(file_okay=False, path_type=Path), help="Write both runs' evaluations as TensorBoard runs `original` and `migrated` here.")
@click.option("--timeout", type=click.IntRange(min=1), default=1800, show_default=True, help="Seconds each run may take.")
@click.pass_context
def verify_command(ctx, original, migrated, module, rtol, target, as_json_output, logdir, timeout):
    """Run ORIGINAL on TF 2.15 + Estimator and its migration (MIGRATED, or migrated now) on this
    TensorFlow from the same first checkpoint; compare every evaluate result and prediction.

    Program arguments go after `--`: tfmigrate verify trainer.py -- --steps 10.
    A package program: tfmigrate verify -m trainer.task [PROJECT_DIR] -- --train-files data.csv
    """
    if module is None and (original is None or not original.is_file()):
        raise click.UsageError("give the original program file, or -m MODULE with the project root")
    if module is not None and original is None:
        original = Path(".")
    if module is not None and not original.is_dir():
        raise click.UsageError("with -m, ORIGINAL (and MIGRATED) are project directories")
    say = (lambda message: None) if as_json_output else (lambda message: click.echo(f"tfmigrate verify: {message}", err=True))
    try:
        verdict = verify(
            original.resolve(),
            None if migrated is None else migrated.resolve(),
            module=module,
            args=list(ctx.obj or []),
            rtol=rtol,
            target=target,
            logdir=None if logdir is None else logdir.resolve(),
            timeout=timeout,
            progress=say,
        )
    except (VerifyError, RuntimeError) as exc:
        click.echo(f"tfmigrate verify: error: {exc}", err=True)
        sys.exit(2)
    if as_json_output:
        click.echo(as_json(verdict, rtol))
    else:
        for line in table(verdict, rtol):
            click.echo(line)
    sys.exit(0 if verdict.ok else 1)


def run_verify(argv: list[str]) -> None:
    """`tfmigrate verify` with `argv` (the program's own arguments after `--`)."""
    args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, args = argv[:cut], argv[cut + 1 :]
    verify_command.main(argv, prog_name="tfmigrate verify", obj=args)
