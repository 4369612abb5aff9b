"""Training speed of one TF1 TPUEstimator program migrated both ways: idiomatic vs hosted tier.

Not a test: a script printing a table. `programs/tpu_mlp.py` (a TPUEstimator MLP, spelled for
TF 2.15, `iterations_per_loop=50`) and `programs/estimator_mlp.py` (the same MLP on a plain
Estimator) are each migrated by `tfmigrate` twice in a temporary directory:

  * idiomatic: `tfmigrate DIR` (a Keras model, `compile(steps_per_execution=iterations_per_loop)`,
    1 for the plain Estimator);
  * hosted: `tfmigrate --ignore <its structural rule> DIR` (so the estimator stays a TPUEstimator
    or Estimator on `tfm.estimator`, the model_fn as written, TF1 graph mode);

and each, and the original on the oracle (TF 2.15's own TPUEstimator), trains twice per size from
a fresh model_dir, `--base` and `--base + --steps` steps, each a fresh process:

    steps/s = steps / (time of the long run - time of the short run)

which cancels start-up, graph building or tracing, and the final checkpoint. Best of `--repeats`.

    python benchmarks/bench_tiers.py                 # both sizes, 2 repeats
    python benchmarks/bench_tiers.py --sizes small --repeats 3 --programs tpu_mlp

Sizes: `small` (2x64 hidden, batch 32: per-step overhead) and `large` (2x1024 hidden, batch 256:
arithmetic). Compare only numbers from one run on one machine.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# program -> the rules to leave off for the hosted tier (the structural rule of its estimator)
PROGRAMS = {"tpu_mlp": "TFM301,TFM302", "estimator_mlp": "TFM201,TFM301,TFM302"}
sys.path.insert(0, str(ROOT / "tests"))

from equivalence.oracle import oracle_python, quiet_env  # noqa: E402

SIZES = {"small": (64, 32, 200, 20000), "large": (1024, 256, 50, 500)}  # hidden, batch, base steps, extra steps


def program_path(name: str) -> Path:
    return ROOT / "benchmarks" / "programs" / f"{name}.py"


def migrate(work: Path, name: str, tier: str) -> Path:
    """The program migrated into `work/name/tier/`, checked to have landed on that tier."""
    directory = work / name / tier
    directory.mkdir(parents=True)
    program = program_path(name)
    shutil.copy(program, directory)
    tfmigrate = Path(sys.executable).with_name("tfmigrate")
    extra = ["--ignore", PROGRAMS[name]] if tier == "hosted" else []
    proc = subprocess.run([str(tfmigrate), *extra, str(directory)], capture_output=True, text=True, env=quiet_env())
    expected = "strategy" if tier == "hosted" else tier  # (the report's name for a kept model_fn run in TF2)
    if f"estimators: 1 {expected}" not in proc.stdout + proc.stderr:
        raise SystemExit(f"tfmigrate did not migrate the program to the {tier} tier:\n{proc.stdout}{proc.stderr}")
    return directory / program.name


def timed(python: Path, program: Path, steps: int, hidden: int, batch: int, work: Path) -> float:
    model_dir = work / "model"
    shutil.rmtree(model_dir, ignore_errors=True)
    argv = [str(python), str(program), f"--steps={steps}", f"--hidden={hidden}", f"--batch={batch}",
            "--iterations_per_loop=50", f"--model_dir={model_dir}"]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=quiet_env(), cwd=work)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{program} failed:\n{proc.stderr[-3000:]}")
    return elapsed


def steps_per_second(python: Path, program: Path, size: str, repeats: int, work: Path) -> float:
    hidden, batch, base, steps = SIZES[size]
    short = min(timed(python, program, base, hidden, batch, work) for _ in range(repeats))
    long = min(timed(python, program, base + steps, hidden, batch, work) for _ in range(repeats))
    return steps / (long - short) if long > short else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS), help=f"comma-separated, of {', '.join(PROGRAMS)}")
    parser.add_argument("--sizes", default="small,large")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-oracle", action="store_true", help="skip TF 2.15's own TPUEstimator")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tfmigrate-bench-tiers-"))
    try:
        print(f"{'program':14} {'size':6} " + " ".join(f"{side + ' steps/s':>18}" for side in ("idiomatic", "hosted", "oracle"))
              + "  hosted/idiomatic  hosted/oracle")
        for name in args.programs.split(","):
            sides = {"idiomatic": (Path(sys.executable), migrate(work, name, "idiomatic")),
                     "hosted": (Path(sys.executable), migrate(work, name, "hosted"))}
            if not args.no_oracle:
                sides["oracle"] = (oracle_python(), program_path(name))
            for size in args.sizes.split(","):
                rates = {side: steps_per_second(python, program, size, args.repeats, work)
                         for side, (python, program) in sides.items()}
                ratios = f"{rates['hosted'] / rates['idiomatic']:16.2f}"
                ratios += f"  {rates['hosted'] / rates['oracle']:13.2f}" if "oracle" in rates else ""
                print(f"{name:14} {size:6} " + " ".join(f"{rate:18.1f}" for rate in rates.values()) + f"  {ratios}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
