"""Differential testing of the codemod on generated Estimator programs (tests/generated).

    .venv/bin/python scripts/generate_programs.py --seeds 0-199 [--target keras|ctl|both] [--keep DIR] [-j N]
    .venv/bin/python scripts/generate_programs.py --print 17      # one seed's program, nothing run

Each seed's program runs on the oracle (TF 2.15 + Estimator, `./run setup` makes it), is migrated
on each target and run on current TF; every `evaluate()` result must agree within 1e-5, keys
included. One line per seed, then the counts. A migration that claims to be done (no TODO, no
error) and crashes or gives other numbers is WRONG: the exit status is 1 when any seed is, and
`--keep DIR` writes each WRONG seed's program and report to DIR/seed_<n>/ (`--keep-all`: every seed).
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from generated.check import TARGETS, Verdict, check, keep  # noqa: E402
from generated.program import generate  # noqa: E402


def seed_range(text: str) -> list[int]:
    """`7`, `0-199` or `3,5,10-12`."""
    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds += range(int(first), int(last or first) + 1)
    return seeds


def _check(seed: int, targets: tuple[str, ...]) -> Verdict | str:
    workdir = Path(tempfile.mkdtemp(prefix=f"tfmigrate-generated-{seed}-"))
    try:
        return check(seed, workdir, targets)
    except AssertionError as error:  # the oracle rejected the program: the generator's defect
        return f"seed {seed}: GENERATOR DEFECT: {str(error)[-1500:]}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-29", help="seeds: 7, 0-199 or 3,5,10-12 (default 0-29)")
    parser.add_argument("--target", choices=("keras", "ctl", "both"), default="both")
    parser.add_argument("--keep", type=Path, help="write each WRONG seed's program and report here")
    parser.add_argument("--keep-all", action="store_true", help="with --keep: every seed, not only WRONG ones")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="programs checked at once (default 1)")
    parser.add_argument("--print", type=int, metavar="SEED", help="print SEED's program and exit")
    args = parser.parse_args(argv)
    if args.print is not None:
        sys.stdout.write(generate(args.print))
        return 0
    targets = TARGETS if args.target == "both" else (args.target,)
    counts: collections.Counter[str] = collections.Counter()
    wrong: list[int] = []
    defects = 0
    seeds = seed_range(args.seeds)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for verdict in pool.map(_check, seeds, [targets] * len(seeds)):
            if isinstance(verdict, str):
                print(verdict, flush=True)
                defects += 1
                continue
            flag = "WRONG " if verdict.wrong else ""
            print(flag + verdict.report(), flush=True)
            for outcome in verdict.outcomes:
                tier = "/".join(outcome.tiers) or "none"
                state = "wrong" if outcome in verdict.wrong else "declined" if not outcome.claimed else "equal"
                counts[f"{outcome.target} {tier} {state}"] += 1
            if verdict.wrong:
                wrong.append(verdict.seed)
            if args.keep and (verdict.wrong or args.keep_all):
                keep(verdict, args.keep)
    print("\n".join(f"{count:5d}  {key}" for key, count in sorted(counts.items())))
    print(f"WRONG seeds: {' '.join(map(str, wrong)) or 'none'}; generator defects: {defects}")
    return 1 if wrong or defects else 0


if __name__ == "__main__":
    sys.exit(main())
