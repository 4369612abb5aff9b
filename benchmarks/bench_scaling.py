"""Whether the codemod's time grows with a file's size and no faster (#18: linear in file size).

Generates TF1 modules of 250 to 4,000 functions (`tf1_corpus.make_file`, fixed seed), in two
kinds: graph-mode script code (respellings, flags, logging: the text pass) and an Estimator
program whose model_fn module also holds the helpers (the LibCST rules). Each file is migrated
in this process (`transform_source`), best of `--repeats`, and its time per line is printed with
its ratio to the smallest file's: a ratio near 1 is linear.

    python benchmarks/bench_scaling.py
    python benchmarks/bench_scaling.py --sizes 250,1000 --repeats 1
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tf1_corpus  # noqa: E402

from tfmigrate.engine import transform_source  # noqa: E402
from tfmigrate.parsing import forget_parses  # noqa: E402

SIZES = (250, 500, 1000, 2000, 4000)
KINDS = ("script", "estimator")


def time_file(text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        forget_parses()  # each run from scratch, not from the last run's parse of the same text
        start = time.perf_counter()
        result = transform_source(text, filename="generated.py")
        best = min(best, time.perf_counter() - start)
        if result.error is not None:
            raise SystemExit(f"the codemod failed on a generated file: {result.error.message}")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="functions per file (comma-separated)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per file, best kept (default 2)")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    transform_source("import tensorflow as tf\ntf.gfile.Exists('x')\n")  # imports and tables, once
    print(f"python {sys.version.split()[0]}; best of {args.repeats}\n")
    print(f"{'kind':<10} {'functions':>9} {'lines':>8} {'KB':>6} {'seconds':>8} {'us/line':>8} {'vs smallest':>11}")
    worst = 0.0
    for kind in KINDS:
        first = None
        for size in sizes:
            text = tf1_corpus.make_file(kind, random.Random(size), functions=size)
            lines = text.count("\n")
            seconds = time_file(text, args.repeats)
            per_line = seconds / lines * 1e6
            first = first or per_line
            worst = max(worst, per_line / first)
            print(f"{kind:<10} {size:>9,} {lines:>8,} {len(text) // 1024:>6,} {seconds:>8.2f} {per_line:>8.1f} {per_line / first:>10.2f}x")
    print(f"\nlargest time per line / smallest file's, worst kind: {worst:.2f}x (the target is within 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
