"""`python -m equivalence.compare_cli ORIGINAL MIGRATED`: run both, print both, compare (used by ./run example)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from .harness import compare, run_current, run_oracle


def main(argv: list[str]) -> int:
    original, migrated = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        want = run_oracle(original, Path(a)).results
        got = run_current(migrated, Path(b)).results
    for line in want:
        print("eval_results", line)
    problems = compare(want, got)
    if problems:
        print("NOT equivalent:\n  " + "\n  ".join(problems))
        return 1
    print(f"equivalent: {len(want)} evaluate() results match the oracle within 1e-5 relative")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
