"""Training speed of the real programs (BERT/ALBERT from PyPI): each migration vs its original on the oracle.

Not a test: a script printing a table. Uses the real-program lane (tests/real_programs: the wheels,
the tiny inputs and flags, the TF1 launcher for the oracle). For each program and side it trains
twice from a fresh output_dir, `--base` steps and `--base + --steps` steps, each a fresh process,
and reports

    steps/s = steps / (time of the long run - time of the short run)

which cancels what both runs pay alike (interpreter and TF start-up, input preparation, graph
building or tracing, the first and last checkpoint), measured the same way on both sides. The
last `global_step/sec: X` the long run logs (TPUEstimator logs one per `iterations_per_loop`
call; the migration may log none) is printed as a note. Start-up varies by seconds from run to
run on a shared machine, more than a few hundred of these tiny steps take: use a quiet machine
and enough `--steps` (2000 or more) for the difference to mean something; a run where the long
run was not slower prints "-". A migrated program that fails is reported with its error's last line.

    python benchmarks/bench_real_programs.py                      # all six, 2000 extra steps, keras target
    python benchmarks/bench_real_programs.py --programs bert/run_pretraining --steps 200 --target ctl
    python benchmarks/bench_real_programs.py --no-migrated        # the oracle side only
    python benchmarks/bench_real_programs.py --iterations-per-loop 2   # the lane's loops (default 100)

Both sides get the same `--iterations_per_loop`: TF 2.15's TPUEstimator runs one step per
session.run off TPU whatever it is; the hosted migration runs that many steps per session.run.

Sizes are the lane's (hidden 32, 2 layers, batch 4): a measure of per-step overhead more than of
arithmetic. Run it on a quiet machine; compare only numbers from the same machine.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_programs.lane import PROGRAMS, Program, Run, Session, run_current, run_original  # noqa: E402
from real_programs.packages import package_dir  # noqa: E402

_RATE = re.compile(r"global_step/sec: ([0-9.eE+-]+)")


def _timed(program: Program, session: Session, side: str, target: str, steps: int, work: Path,
           iterations: int) -> tuple[float, Run]:
    out = work / f"{side}-{steps}"
    loop = [f"--iterations_per_loop={iterations}"]
    if side == "oracle":
        args = [*program.entry(package_dir(program.package)),
                *_with(program.run_flags(session.inputs, out, init_checkpoint=None, evaluate=False, steps=steps), loop)]
        start = time.perf_counter()
        run = run_original(args, package=program.package, cwd=work)
    else:
        migration = session.migration(program.package, target)
        args = [*program.entry(migration.root / program.package),
                *_with(program.run_flags(session.inputs, out, init_checkpoint=None, evaluate=False, steps=steps), loop)]
        start = time.perf_counter()
        run = run_current(args, package_parent=migration.package_parent, cwd=work)
    return time.perf_counter() - start, run


def _with(flags: list[str], replacements: list[str]) -> list[str]:
    """`flags` with each of `replacements` (`--name=value`) in place of the lane's value."""
    names = {flag.split("=", 1)[0] for flag in replacements}
    return [flag for flag in flags if flag.split("=", 1)[0] not in names] + replacements


def _last_line(run: Run) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip() and not line.startswith(("I0000", "W0000", "WARNING: All"))]
    return lines[-1][:100] if lines else f"exit {run.returncode}"


def measure(program: Program, session: Session, side: str, target: str, base: int, steps: int,
            iterations: int) -> tuple[float | None, str]:
    work = session.root / "bench" / side / program.id.replace("/", "-")
    work.mkdir(parents=True, exist_ok=True)
    short_time, short = _timed(program, session, side, target, base, work, iterations)
    if short.returncode != 0:
        return None, f"fails: {_last_line(short)}"
    long_time, long = _timed(program, session, side, target, base + steps, work, iterations)
    if long.returncode != 0:
        return None, f"fails: {_last_line(long)}"
    rates = _RATE.findall(long.stderr)
    timed = steps / (long_time - short_time) if long_time > short_time else None
    note = f"runs {short_time:.1f}s / {long_time:.1f}s: " + (f"{timed:.1f} steps/s by difference" if timed else "too noisy to difference")
    if rates:  # the program's own measure of its loop; not comparable across sides, so only a note
        note += f", last logged global_step/sec {float(rates[-1]):.1f}"
    return timed, note


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default="", help="comma-separated ids (bert/run_squad,...); default all")
    parser.add_argument("--steps", type=int, default=2000, help="extra steps of the long run (default 2000)")
    parser.add_argument("--base", type=int, default=4, help="steps of the short run (default 4)")
    parser.add_argument("--target", choices=("keras", "ctl"), default="keras")
    parser.add_argument("--iterations-per-loop", type=int, default=100,
                        help="the programs' --iterations_per_loop (default 100; BERT's own default is 1000)")
    parser.add_argument("--no-migrated", action="store_true", help="time the originals only")
    args = parser.parse_args()
    wanted = {p for p in args.programs.split(",") if p}
    programs = [p for p in PROGRAMS if not wanted or p.id in wanted]
    if wanted - {p.id for p in programs}:
        parser.error(f"unknown programs: {sorted(wanted - {p.id for p in programs})}")

    session = Session()
    try:
        print(f"{'program':24} {'oracle steps/s':>15} {'migrated steps/s':>17} {'ratio':>6}  notes")
        for program in programs:
            oracle, oracle_note = measure(program, session, "oracle", args.target, args.base, args.steps,
                                          args.iterations_per_loop)
            migrated, migrated_note = (None, "not run") if args.no_migrated else measure(
                program, session, "migrated", args.target, args.base, args.steps, args.iterations_per_loop)
            ratio = f"{migrated / oracle:6.2f}" if oracle and migrated else f"{'-':>6}"
            fmt = lambda v: f"{v:.1f}" if v is not None else "-"  # noqa: E731
            print(f"{program.id:24} {fmt(oracle):>15} {fmt(migrated):>17} {ratio}  oracle: {oracle_note}; "
                  f"migrated ({args.target}): {migrated_note}", flush=True)
    finally:
        session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
