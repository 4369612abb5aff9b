"""How fast the codemod migrates a large TF1-era tree, against `tf_upgrade_v2` and bare LibCST.

Generates a corpus (`tf1_corpus.py`: input pipelines, graph code, tf.layers models, flag scripts,
Estimator/TPUEstimator programs, utilities, TF2 and plain modules), then times, each as a fresh
process and the best of `--repeats` runs:

- `tfmigrate -j 1` and `-j N` writing migrated copies (`--out-dir`), in lines/s;
- `tf_upgrade_v2 --intree` from the TF 2.15 oracle venv on the same files;
- bare `libcst.parse_module(src).code` over the same files, in one process, without its startup
  (the floor of any tool that puts every file through LibCST);
- `tfmigrate -j 1` over a tree of plain Python that never mentions TensorFlow.

    python benchmarks/bench_codemod.py             # 160 files, ~55k lines; about 2 minutes
    python benchmarks/bench_codemod.py --quick     # a small corpus, one run each (smoke test)
    python benchmarks/bench_codemod.py --pythonpath /path/to/other/checkout   # another tfmigrate

Ratios are taken between runs of the same invocation, so they hold on a noisy machine better
than the absolute times do.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_RUN_CLI = "import sys; from tfmigrate.cli import main; sys.argv[0] = 'tfmigrate'; main()"
_FLOOR = """
import sys, time, pathlib, libcst
paths = sorted(pathlib.Path(sys.argv[1]).rglob('*.py'))
start = time.perf_counter()
for path in paths:
    libcst.parse_module(path.read_text(encoding='utf-8')).code
print(time.perf_counter() - start)
"""


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _env(pythonpath: str | None) -> dict[str, str]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _timed(cmd: list[str], env: dict[str, str], ok=(0,)) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc.stdout + proc.stderr


def _best(label: str, repeats: int, make_cmd, env: dict[str, str], ok=(0,)) -> tuple[float, list[float], str]:
    times, output = [], ""
    for _ in range(repeats):
        cmd, cleanup = make_cmd()
        elapsed, output = _timed(cmd, env, ok)
        cleanup()
        times.append(elapsed)
    return min(times), times, output


def tfmigrate_cmd(paths: list[Path], jobs: int, scratch: Path):
    out = scratch / f"out-tfmigrate-{jobs}"

    def make():
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-c", _RUN_CLI, "-q", "-j", str(jobs), "--out-dir", str(out), *map(str, paths)]
        return cmd, lambda: shutil.rmtree(out, ignore_errors=True)

    return make


def oracle_tf_upgrade_v2(build: bool) -> Path | None:
    """The oracle venv's `tf_upgrade_v2` (built by tests/equivalence/oracle.py when `build`)."""
    oracle = _load("tfmigrate_oracle", ROOT / "tests" / "equivalence" / "oracle.py")
    script = oracle.oracle_dir() / "bin" / "tf_upgrade_v2"
    if not script.exists() and build:
        script = oracle.oracle_python().parent / "tf_upgrade_v2"
    return script if script.exists() else None


def tf_upgrade_v2_cmd(script: Path, tree: Path, out: Path, report: Path) -> list[str]:
    """`tf_upgrade_v2 --intree tree` under the oracle's Python, a file it cannot annotate skipped
    rather than ending the run (tf_upgrade_v2_isolated.py: a run that stops there times a part)."""
    return [str(script.parent / "python"), str(Path(__file__).parent / "tf_upgrade_v2_isolated.py"),
            "--intree", str(tree), "--outtree", str(out), "--reportfile", str(report)]


def time_tf_upgrade_v2(script: Path, tree: Path, scratch: Path, repeats: int, env: dict[str, str]) -> tuple[float, list[float]]:
    """`tf_upgrade_v2 --intree tree` (best of `repeats`, fresh output each time)."""
    out = scratch / "out-tf_upgrade_v2"

    def upgrade_cmd():
        shutil.rmtree(out, ignore_errors=True)
        cmd = tf_upgrade_v2_cmd(script, tree, out, scratch / "report.txt")
        return cmd, lambda: shutil.rmtree(out, ignore_errors=True)

    best, runs, _ = _best("upgrade", repeats, upgrade_cmd, env)
    return best, runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small corpus, one run each (smoke test)")
    parser.add_argument("--files", type=int, help="corpus files (default 160; --quick 24)")
    parser.add_argument("--lines-per-file", type=int, help="average lines per file (default 340; --quick 120)")
    parser.add_argument("--plain-lines", type=int, help="lines of the non-TF tree (default 100000; --quick 5000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="N for the -j N run (default: CPUs)")
    parser.add_argument("--repeats", type=int, help="runs per measurement, best kept (default 3; --quick 1)")
    parser.add_argument("--oracle-repeats", type=int, help="tf_upgrade_v2 runs (default 2; --quick 1)")
    parser.add_argument("--no-oracle", action="store_true", help="skip tf_upgrade_v2")
    parser.add_argument("--build-oracle", action="store_true", help="create the oracle venv if it is missing (needs the network)")
    parser.add_argument("--pythonpath", help="prepend to PYTHONPATH for tfmigrate runs (benchmark another checkout)")
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = parser.parse_args(argv)
    quick = args.quick
    files = args.files or (24 if quick else 160)
    per_file = args.lines_per_file or (120 if quick else 340)
    plain_lines = args.plain_lines or (5_000 if quick else 100_000)
    repeats = args.repeats or (1 if quick else 3)
    oracle_repeats = args.oracle_repeats or (1 if quick else 2)
    jobs = max(2, args.jobs)

    corpus_mod = _load("tf1_corpus", HERE / "tf1_corpus.py")
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tfmigrate-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        corpus, plain = scratch / "corpus", scratch / "plain"
        shutil.rmtree(corpus, ignore_errors=True)
        shutil.rmtree(plain, ignore_errors=True)
        n_files, lines = corpus_mod.write_corpus(corpus, files=files, seed=args.seed, lines_per_file=per_file)
        p_files, p_lines = corpus_mod.write_plain_tree(plain, lines=plain_lines)
        env = _env(args.pythonpath)
        print(f"corpus: {n_files} files, {lines:,} lines (seed {args.seed}); non-TF tree: {p_files} files, {p_lines:,} lines")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; best of {repeats} (tf_upgrade_v2: {oracle_repeats})\n")

        ok = (0, 1)  # 1: files changed / TODOs left
        t1, runs1, out1 = _best("j1", repeats, tfmigrate_cmd([corpus], 1, scratch), env, ok)
        if " 0 failed" not in out1:
            raise SystemExit(f"tfmigrate reported failures:\n{out1}")
        tn, runsn, _ = _best("jN", repeats, tfmigrate_cmd([corpus], jobs, scratch), env, ok)
        _row(f"tfmigrate -j 1", t1, lines, runs1)
        _row(f"tfmigrate -j {jobs}", tn, lines, runsn, f"scaling {t1 / tn:.2f}x")

        floor, floor_runs = min_of(lambda: float(_timed([sys.executable, "-c", _FLOOR, str(corpus)], env)[1].split()[-1]), oracle_repeats)
        _row("libcst parse+codegen", floor, lines, floor_runs, "in one process, startup excluded")

        upgrade = None
        script = None if args.no_oracle else oracle_tf_upgrade_v2(args.build_oracle)
        if script is not None:
            upgrade, upgrade_runs = time_tf_upgrade_v2(script, corpus, scratch, oracle_repeats, env)
            tf_import, _ = _timed([str(script.parent / "python"), "-c", "import tensorflow.tools.compatibility.tf_upgrade_v2_main"], env)
            _row("tf_upgrade_v2 --intree", upgrade, lines, upgrade_runs, f"TF 2.15; of which importing it: {tf_import:.1f} s")
        else:
            print("tf_upgrade_v2 --intree      skipped (no oracle venv; --build-oracle creates it)")

        tp, runsp, _ = _best("plain", repeats, tfmigrate_cmd([plain], 1, scratch), env, ok)
        startup, startup_runs = min_of(lambda: _timed([sys.executable, "-c", "import tfmigrate.cli, tfmigrate.registry as r; r.all_rules()"], env)[0], repeats)
        _row("tfmigrate -j 1, non-TF tree", tp, p_lines, runsp, f"{p_files} files; process startup alone {startup:.2f} s")

        print("\nratios (their time / tfmigrate's; above 1: tfmigrate is faster)")
        if upgrade is not None:
            print(f"ratio vs tf_upgrade_v2, -j 1: {upgrade / t1:.2f}x")
            print(f"ratio vs tf_upgrade_v2, -j {jobs}: {upgrade / tn:.2f}x")
        else:
            print("ratio vs tf_upgrade_v2: n/a (skipped)")
        print(f"ratio vs libcst parse+codegen floor, -j 1: {floor / t1:.2f}x")
        print(f"ratio vs libcst parse+codegen floor, -j {jobs}: {floor / tn:.2f}x")
        print(f"scaling -j 1 -> -j {jobs}: {t1 / tn:.2f}x")
        print(f"non-TF tree: {tp:.2f} s for {p_lines:,} lines")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


def min_of(fn, repeats: int) -> tuple[float, list[float]]:
    runs = [fn() for _ in range(repeats)]
    return min(runs), runs


def _row(label: str, seconds: float, lines: int, runs: list[float], note: str = "") -> None:
    each = ", ".join(f"{r:.2f}" for r in runs)
    print(f"{label:<28} {seconds:7.2f} s {lines / seconds:10,.0f} lines/s   [{each}]  {note}".rstrip())


if __name__ == "__main__":
    sys.exit(main())
