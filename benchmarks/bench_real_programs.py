"""Training speed of the real programs (BERT/ALBERT from PyPI): each migration vs its original on the oracle.

Not a test: a script printing a table. Uses the real-program lane (tests/real_programs: the wheels,
the tiny inputs and flags, the TF1 launcher for the oracle). For each program and side it trains
twice from a fresh output_dir, `--base` steps and `--base + --steps` steps, each a fresh process,
and reports

    steps/s = steps / (time of the long run - time of the short run)

which cancels what both runs pay alike (interpreter and TF start-up, input preparation, graph
building or tracing, the first and last checkpoint), measured the same way on every side, and the
long run's peak RSS (`ru_maxrss`: compare sides, not absolutes). Each run is a fresh interpreter,
as a user runs a program. `--forked` runs them as the lane does, forked from a server that
imported TensorFlow and Keras: faster to start, but it slows the strategy tier's steps and not
the graph tier's (BERT pretraining with hidden 128: 49 steps/s forked against 57-59 fresh; the
graph tier 58-64 either way), so its ratios understate the strategy tier. The sides (`--sides`):

  * `oracle`: the original on TF 2.15;
  * `strategy`: the migration, its model_fn on the strategy tier (the default: TF2, the model_fn
    in the strategy's `tf.function`, `iterations_per_loop` steps per call);
  * `graph`: the migration with `TFMIGRATE_MODEL_FN_TIER=graph` (TF1 graph mode, the fallback);
  * `xla`: the strategy tier with `TFMIGRATE_JIT_COMPILE=1` (each call compiled by XLA).

Ratios are to `graph` (the strategy tier's bar is 1.0x it) and to the oracle. The last
`global_step/sec: X` the long run logs (TPUEstimator logs one per `iterations_per_loop` call; the
migration may log none) is printed as a note. Start-up varies by seconds from run to run on a
shared machine, more than a few hundred of these tiny steps take: use a quiet machine and enough
`--steps` (2000 or more) for the difference to mean something; a run where the long run was not
slower prints "-". A side that fails is reported with its error's last line.

    python benchmarks/bench_real_programs.py                      # all six, 2000 extra steps, keras target
    python benchmarks/bench_real_programs.py --programs bert/run_pretraining --steps 200 --sides strategy,graph
    python benchmarks/bench_real_programs.py --iterations-per-loop 2   # the lane's loops (default 100)
    python benchmarks/bench_real_programs.py --programs bert/run_pretraining --sides strategy,graph --rounds 5

`--rounds N` measures every side N times in alternation (each round starts with the next side) and
reports each side's median: on a shared machine one run per side swings more than the tiers differ.

Every side gets the same `--iterations_per_loop`: TF 2.15's TPUEstimator runs one step per
session.run off TPU whatever it is; the migration runs that many steps per call on either tier.

Sizes are the lane's (hidden 32, 2 layers, batch 4): a measure of per-step overhead more than of
arithmetic; `--size` trains a larger model of the same program (its config's keys and the batch).
Run it on a quiet machine; compare only numbers from the same machine.

    python benchmarks/bench_real_programs.py --programs bert/run_pretraining --sides strategy,graph --steps 500 \
        --size hidden_size=256,intermediate_size=1024,num_attention_heads=4,num_hidden_layers=4,batch=32
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_programs.lane import PROGRAMS, Program, Run, Session, run_current, run_original  # noqa: E402
from real_programs.packages import package_dir  # noqa: E402

SIDES = {"oracle": {}, "strategy": {"TFMIGRATE_MODEL_FN_TIER": "strategy"},
         "graph": {"TFMIGRATE_MODEL_FN_TIER": "graph"},
         "xla": {"TFMIGRATE_MODEL_FN_TIER": "strategy", "TFMIGRATE_JIT_COMPILE": "1"}}

# Runs the script given as the first argument as `python SCRIPT ARGS` would, and reports its peak RSS.
_MEASURED = """
import atexit, os, resource, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nPEAK_RSS_KB %d\\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""
_PEAK = re.compile(r"^PEAK_RSS_KB (\d+)$", re.M)
_RATE = re.compile(r"global_step/sec: ([0-9.eE+-]+)")


def _timed(program: Program, session: Session, side: str, target: str, steps: int, work: Path,
           iterations: int, size: dict[str, int]) -> tuple[float, Run]:
    out = work / f"{side}-{steps}"
    shutil.rmtree(out, ignore_errors=True)  # a fresh output_dir: a checkpoint there would end the run early
    loop = [f"--iterations_per_loop={iterations}"]
    flags = _with(program.run_flags(session.inputs, out, init_checkpoint=None, evaluate=False, steps=steps), loop)
    flags = _with(flags, _sized(flags, size, work))
    start = time.perf_counter()
    if side == "oracle":
        run = run_original([*program.entry(package_dir(program.package)), *flags], package=program.package, cwd=work,
                           code=_MEASURED)
    else:
        migration = session.migration(program.package, target)
        run = run_current([*program.entry(migration.root / program.package), *flags],
                          package_parent=migration.package_parent, cwd=work, code=_MEASURED, **SIDES[side])
    return time.perf_counter() - start, run


def _with(flags: list[str], replacements: list[str]) -> list[str]:
    """`flags` with each of `replacements` (`--name=value`) in place of the lane's value."""
    names = {flag.split("=", 1)[0] for flag in replacements}
    return [flag for flag in flags if flag.split("=", 1)[0] not in names] + replacements


def _sized(flags: list[str], size: dict[str, int], work: Path) -> list[str]:
    """The flags that give the model `size` (`--size hidden_size=128,...`): a copy of the program's
    BERT/ALBERT config with those keys, and `batch` as its training batch size."""
    replaced = []
    config = dict(size)
    batch = config.pop("batch", None)
    if batch is not None:
        replaced.append(f"--train_batch_size={batch}")
    for flag in flags:
        name, _, value = flag.partition("=")
        if config and name in ("--bert_config_file", "--albert_config_file"):
            sized = work / f"sized-{Path(value).name}"
            sized.write_text(json.dumps({**json.loads(Path(value).read_text()), **config}, indent=1))
            replaced.append(f"{name}={sized}")
    return replaced


def _size(text: str) -> dict[str, int]:
    """`hidden_size=128,num_hidden_layers=4,batch=16` as a dict (the config keys the programs read)."""
    pairs = [item.split("=", 1) for item in text.split(",") if item]
    if any(len(pair) != 2 or not pair[1].isdigit() for pair in pairs):
        raise argparse.ArgumentTypeError(f"--size takes key=integer pairs, got {text!r}")
    return {key: int(value) for key, value in pairs}


def _last_line(run: Run) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip() and not line.startswith(("I0000", "W0000", "WARNING: All"))]
    return lines[-1][:100] if lines else f"exit {run.returncode}"


def measure(program: Program, session: Session, side: str, target: str, base: int, steps: int,
            iterations: int, size: dict[str, int]) -> tuple[float | None, int | None, str]:
    """(steps/s, the long run's peak RSS in KiB, a note)."""
    work = session.root / "bench" / side / program.id.replace("/", "-")
    work.mkdir(parents=True, exist_ok=True)
    short_time, short = _timed(program, session, side, target, base, work, iterations, size)
    if short.returncode != 0:
        return None, None, f"fails: {_last_line(short)}"
    # again: the first run of a side may start its interpreter's fork server (seconds)
    short_time = min(short_time, _timed(program, session, side, target, base, work, iterations, size)[0])
    long_time, long = _timed(program, session, side, target, base + steps, work, iterations, size)
    if long.returncode != 0:
        return None, None, f"fails: {_last_line(long)}"
    if side != "oracle" and "runs in graph mode" in long.stderr and side != "graph":
        return None, None, "a call fell back to graph mode"
    rates = _RATE.findall(long.stderr)
    peak = _PEAK.findall(long.stderr)
    timed = steps / (long_time - short_time) if long_time > short_time else None
    note = f"{short_time:.1f}s/{long_time:.1f}s"
    if rates:  # the program's own measure of its loop; not comparable across sides, so only a note
        note += f", logged {float(rates[-1]):.0f}/s"
    return timed, int(peak[-1]) if peak else None, note


def _rounds(rounds: int, sides: list[str], measure_side: Callable[[str], tuple]) -> dict[str, tuple]:
    """Each side measured `rounds` times, the sides alternating (each round starts one side later,
    so that none always runs first): per side, the median rate, the largest peak RSS and a note
    listing every round's rate."""
    runs: dict[str, list[tuple]] = {side: [] for side in sides}
    for round_ in range(rounds):
        for side in sides[round_ % len(sides):] + sides[: round_ % len(sides)]:
            runs[side].append(measure_side(side))
    if rounds == 1:
        return {side: found[0] for side, found in runs.items()}
    measured = {}
    for side, found in runs.items():
        rates = [rate for rate, _, _ in found if rate is not None]
        peaks = [peak for _, peak, _ in found if peak is not None]
        listed = ", ".join(f"{rate:.1f}" if rate is not None else "-" for rate, _, _ in found)
        measured[side] = (statistics.median(rates) if rates else None, max(peaks) if peaks else None,
                          f"rounds {listed}" + ("" if len(rates) == len(found) else f"; {found[-1][2]}"))
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default="", help="comma-separated ids (bert/run_squad,...); default all")
    parser.add_argument("--steps", type=int, default=2000, help="extra steps of the long run (default 2000)")
    parser.add_argument("--base", type=int, default=4, help="steps of the short run (default 4)")
    parser.add_argument("--target", choices=("keras", "ctl"), default="keras")
    parser.add_argument("--iterations-per-loop", type=int, default=100,
                        help="the programs' --iterations_per_loop (default 100; BERT's own default is 1000)")
    parser.add_argument("--sides", default=",".join(SIDES), help=f"comma-separated, of {', '.join(SIDES)}")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure every side this many times, the sides alternating; report each side's median")
    parser.add_argument("--size", type=_size, default={},
                        help="the model's size instead of the lane's: config keys and batch, e.g. "
                             "hidden_size=256,intermediate_size=1024,num_attention_heads=4,num_hidden_layers=4,batch=32")
    parser.add_argument("--forked", action="store_true",
                        help="run the programs in children of the lane's fork server (faster start-up; see the doc)")
    args = parser.parse_args()
    if not args.forked:
        os.environ["TFMIGRATE_FRESH_PROCESSES"] = "1"  # (forked.server reads it when it is first asked)
    wanted = {p for p in args.programs.split(",") if p}
    programs = [p for p in PROGRAMS if not wanted or p.id in wanted]
    if wanted - {p.id for p in programs}:
        parser.error(f"unknown programs: {sorted(wanted - {p.id for p in programs})}")
    sides = [s for s in args.sides.split(",") if s]
    if set(sides) - set(SIDES):
        parser.error(f"unknown sides: {sorted(set(sides) - set(SIDES))}")

    session = Session()
    fmt = lambda v, spec: format(v, spec) if v is not None else "-"  # noqa: E731
    try:
        print(f"{'program':24} " + " ".join(f"{side + ' steps/s':>16}" for side in sides)
              + " " + " ".join(f"{side + '/graph':>14}" for side in sides if side not in ("graph",) and "graph" in sides)
              + " " + " ".join(f"{side + ' MiB':>12}" for side in sides) + "  notes")
        for program in programs:
            measured = _rounds(args.rounds, sides, lambda side: measure(
                program, session, side, args.target, args.base, args.steps, args.iterations_per_loop, args.size))
            rates = " ".join(f"{fmt(measured[s][0], '.1f'):>16}" for s in sides)
            graph = measured.get("graph", (None,))[0]
            ratios = " ".join(f"{fmt(measured[s][0] / graph if measured[s][0] and graph else None, '.2f'):>14}"
                              for s in sides if s != "graph" and "graph" in sides)
            memory = " ".join(f"{fmt(measured[s][1] / 1024 if measured[s][1] else None, '.0f'):>12}" for s in sides)
            notes = "; ".join(f"{s}: {measured[s][2]}" for s in sides)
            print(f"{program.id:24} {rates} {ratios} {memory}  {notes}", flush=True)
    finally:
        session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
