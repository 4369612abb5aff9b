"""How fast the codemod migrates published TF1 code, against `tf_upgrade_v2` and bare LibCST.

The corpus is the Python sources of published TF1-era packages from PyPI, downloaded as wheels
(`pip download --no-deps`, unzipped, never installed) into `$TFMIGRATE_CACHE/real-code/` on first
use: `tensor2tensor==1.15.7` (a large TPUEstimator code base), `bert-tensorflow==1.0.4`,
`albert-tensorflow==1.1`, `mesh-tensorflow==0.1.21`, `adanet==0.9.0` and
`tensorflow-estimator==2.15.0`'s own sources. No line of them is kept in this repository. Times,
each a fresh process, best of `--repeats`:

- `tfmigrate -j 1` and `-j N` writing migrated copies (`--out-dir`), in lines/s, and the peak
  memory (max RSS) of the `-j 1` process; the two alternate, and the scaling is given for the best
  runs and for each pair, next to the machine's own ceiling (N processes of pure Python against one);
- `tf_upgrade_v2 --intree` from the TF 2.15 oracle venv on the same tree;
- bare `libcst.parse_module(src).code` over the same files, in one process, startup excluded;
- each file migrated alone in one process (`transform_source`), its best time over `--repeats`
  passes over the corpus: the median file's lines/s and the ten slowest files', whose ratio shows
  whether time grows faster than a file's size.

    python benchmarks/bench_real_code.py              # all packages; a few minutes
    python benchmarks/bench_real_code.py --packages bert-tensorflow==1.0.4 --repeats 1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

PACKAGES = (
    "tensor2tensor==1.15.7",
    "bert-tensorflow==1.0.4",
    "albert-tensorflow==1.1",
    "mesh-tensorflow==0.1.21",
    "adanet==0.9.0",
    "tensorflow-estimator==2.15.0",
)
_MARKER = ".tfmigrate-unpacked"

_PER_FILE = """
import json, sys, time, pathlib
from tfmigrate.engine import transform_source
# The modules the codemod imports on first need (LibCST's codemod visitors and metadata), imported
# before the clock starts: the first file to need one would otherwise be charged the import.
import libcst.codemod.visitors, libcst.metadata
# Each file's best time over `repeats` passes over the whole corpus (one file timed once swings
# with the machine's noise; passes over the corpus, not back-to-back runs of one file, so that no
# cache of the last few texts serves a file its own earlier run).
texts = [(path, path.read_text(encoding='utf-8', errors='replace')) for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.py'))]
best, status = {}, {}
for _ in range(int(sys.argv[2])):
    for path, text in texts:
        start = time.perf_counter()
        try:
            transform_source(text, filename=str(path))
            status[path] = 'ok'
        except Exception as error:  # a file the codemod fails on is timed too, and named
            status[path] = type(error).__name__
        best[path] = min(best.get(path, float('inf')), time.perf_counter() - start)
print(json.dumps([[str(path), text.count('\\n') + 1, best[path], status[path]] for path, text in texts]))
"""


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


codemod = _load("bench_codemod", HERE / "bench_codemod.py")


def cache_root() -> Path:
    oracle = _load("tfmigrate_oracle_env", ROOT / "migrate" / "oracle_env.py")
    return oracle.cache_dir() / "real-code"


def unpacked(requirement: str, cache: Path) -> Path:
    """`requirement`'s .py files under `cache/<name-version>/` (downloaded on first use)."""
    root = cache / requirement.replace("==", "-")
    if (root / _MARKER).exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="tfmigrate-wheel-") as download:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--only-binary=:all:", "--dest", download, requirement], check=True)
        (wheel,) = Path(download).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root, [m for m in archive.namelist() if m.endswith(".py") and ".dist-info/" not in m])
    (root / _MARKER).write_text(requirement)
    return root


def _lines(paths: list[Path]) -> int:
    return sum(p.read_text(encoding="utf-8", errors="replace").count("\n") + 1 for p in paths)


def per_file(tree: Path, env: dict[str, str], repeats: int) -> list[tuple[str, int, float, str]]:
    proc = subprocess.run([sys.executable, "-c", _PER_FILE, str(tree), str(repeats)], capture_output=True, text=True, env=env, check=True)
    return [tuple(row) for row in json.loads(proc.stdout.splitlines()[-1])]


_SPIN = "import sys\nfor _ in range(int(sys.argv[1])):\n    total = sum(i * i % 7 for i in range(3_000_000))\n"


def cpu_ceiling(jobs: int, repeats: int) -> tuple[float, list[float]]:
    """How much faster `jobs` processes of pure Python finish `jobs` units of work than one process
    doing them all, best of `repeats` alternating pairs (each pair's ratio listed): what `-j N`
    can reach on this machine at best (a VM's vCPUs may share cores, or be throttled)."""
    ratios = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _SPIN, str(jobs)], check=True)
        one = time.perf_counter() - start
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN, "1"]) for _ in range(jobs)]
        for proc in procs:
            proc.wait()
        ratios.append(one / (time.perf_counter() - start))
    return max(ratios), ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", default=",".join(PACKAGES), help="comma-separated requirements (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="N for the -j N run (default: CPUs)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per measurement, best kept (default 2)")
    parser.add_argument("--no-oracle", action="store_true", help="skip tf_upgrade_v2")
    args = parser.parse_args(argv)
    jobs = max(2, args.jobs)
    cache = cache_root()
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tfmigrate-bench-real-"))
    try:
        tree = scratch / "tree"  # the packages side by side, as one tree
        tree.mkdir()
        for requirement in args.packages.split(","):
            shutil.copytree(unpacked(requirement, cache), tree / requirement.replace("==", "-"),
                            ignore=shutil.ignore_patterns(_MARKER))
        files = sorted(tree.rglob("*.py"))
        lines = _lines(files)
        env = codemod._env(None)
        print(f"corpus: {args.packages}: {len(files)} files, {lines:,} lines")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; best of {args.repeats}\n")

        ok = (0, 1, 2)  # 1: changed / TODOs; 2: some file failed (reported below, not hidden)
        # -j 1 and -j N alternate, so that a slow phase of the machine falls on both alike; the
        # peak memory is the -j 1 runs' (the first run, before any -j N child exists).
        runs1, runsn, out1, peak_mb = [], [], "", 0.0
        for _ in range(args.repeats):
            for n, runs in ((1, runs1), (jobs, runsn)):
                cmd, cleanup = codemod.tfmigrate_cmd([tree], n, scratch)()
                elapsed, output = codemod._timed(cmd, env, ok)
                cleanup()
                runs.append(elapsed)
                if n == 1:
                    out1 = output
                    peak_mb = peak_mb or resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        t1, tn = min(runs1), min(runsn)
        pairs = [a / b for a, b in zip(runs1, runsn)]
        summary = next((line for line in out1.splitlines() if " failed" in line), "").strip()
        codemod._row("tfmigrate -j 1", t1, lines, runs1, f"peak RSS {peak_mb:,.0f} MB")
        codemod._row(f"tfmigrate -j {jobs}", tn, lines, runsn, f"scaling {t1 / tn:.2f}x (each pair {', '.join(f'{r:.2f}' for r in pairs)})")
        print(f"  {summary}")
        ceiling, ceiling_runs = cpu_ceiling(jobs, args.repeats)
        print(f"{'CPU ceiling':<28} {ceiling:7.2f}x  [{', '.join(f'{r:.2f}' for r in ceiling_runs)}]  "
              f"{jobs} processes of pure Python against one doing their work, alternating (the machine's own scaling)")

        floor, floor_runs = codemod.min_of(
            lambda: float(codemod._timed([sys.executable, "-c", codemod._FLOOR, str(tree)], env)[1].split()[-1]), args.repeats)
        codemod._row("libcst parse+codegen", floor, lines, floor_runs, "in one process, startup excluded")

        upgrade = None
        script = None if args.no_oracle else codemod.oracle_tf_upgrade_v2(build=False)
        if script is not None:
            upgrade, upgrade_runs = codemod.time_tf_upgrade_v2(script, tree, scratch, args.repeats, env)
            codemod._row("tf_upgrade_v2 --intree", upgrade, lines, upgrade_runs, "TF 2.15")
        else:
            print("tf_upgrade_v2 --intree      skipped (no oracle venv)")

        rows = per_file(tree, env, args.repeats)
        rates = [n / t for _, n, t, _ in rows if t > 0]
        median = statistics.median(rates)
        print(f"\nper file, in one process, each file's best of {args.repeats}: median {median:,.0f} lines/s over "
              f"{len(rows)} files; the ten slowest:")
        for path, n, seconds, status in sorted(rows, key=lambda r: -r[2])[:10]:
            note = "" if status == "ok" else f"  ({status})"
            print(f"  {seconds:6.2f} s {n:6,} lines {n / seconds:8,.0f} lines/s  {Path(path).relative_to(tree)}{note}")
        slowest_rate = min(n / t for _, n, t, _ in rows if n >= 200 and t > 0)
        print(f"slowest file of 200+ lines: {slowest_rate:,.0f} lines/s, {median / slowest_rate:.1f}x below the median")
        # Whether time grows faster than size: the largest files' rate against the median file's.
        largest = sorted((r for r in rows if r[2] > 0), key=lambda r: -r[1])[:5]
        print("the five largest files: " + ", ".join(
            f"{n:,} lines {n / t:,.0f} lines/s ({median / (n / t):.1f}x below)" for _, n, t, _ in largest))

        print("\nratios (their time / tfmigrate's; above 1: tfmigrate is faster)")
        if upgrade is not None:
            print(f"ratio vs tf_upgrade_v2, -j 1: {upgrade / t1:.2f}x")
            print(f"ratio vs tf_upgrade_v2, -j {jobs}: {upgrade / tn:.2f}x")
        print(f"ratio vs libcst parse+codegen floor, -j 1: {floor / t1:.2f}x")
        print(f"scaling -j 1 -> -j {jobs}: {t1 / tn:.2f}x (best runs), {statistics.median(pairs):.2f}x (median pair); "
              f"the machine's CPU ceiling {ceiling:.2f}x")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
