"""The equivalence harness: the TF1 original on the oracle vs its migration on current TF.

A program under test prints one line per result it wants compared:

    eval_results {'global_step': 7.0, 'loss': 1.2556...}

(the printed dict of an `evaluate()` call, keys sorted). `compare()` demands the same number of
lines, the same keys in each, and every value within `rtol` relative (1e-5 by default).

A program may import a module of its own (BERT's `run_classifier.py` imports `modeling`): the
fixture `<case>__<module>.in.py` next to `<case>.in.py` is that module. It is a fixture of its own
(migrated alone, with its `.out.py`/`.ctl.out.py`), and the harness puts it next to the program as
`<module>.py`: the original next to the original, its migration next to the migration.
"""

from __future__ import annotations

import ast
import math
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from . import forked
from .oracle import oracle_python, oracle_run_env, quiet_env

RESULT_PREFIX = "eval_results "


@dataclass
class Run:
    python: str
    program: Path
    returncode: int
    stdout: str
    stderr: str

    @property
    def results(self) -> list[dict[str, float]]:
        return parse_results(self.stdout)

    def check(self) -> "Run":
        if self.returncode != 0:
            raise AssertionError(
                f"{self.program.name} failed under {self.python} (exit {self.returncode}):\n{self.stderr[-6000:]}"
            )
        return self


def parse_results(stdout: str) -> list[dict[str, float]]:
    """The printed dicts; a `nan` or `inf` value (a float's repr) is read as that float."""
    out = []
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            out.append(_literal(ast.parse(line[len(RESULT_PREFIX):], mode="eval").body))
    return out


_NON_FINITE = {"nan": math.nan, "inf": math.inf}


def _literal(node: ast.AST):
    """`ast.literal_eval` that also reads the names a non-finite float prints as (`nan`, `inf`)."""
    if isinstance(node, ast.Name) and node.id in _NON_FINITE:
        return _NON_FINITE[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_literal(node.operand)
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


def sibling_modules(case: Path) -> dict[str, Path]:
    """Module name -> the `<case>__<module>.in.py` fixtures `case` imports (see the docstring)."""
    stem = case.name[: -len(".in.py")]
    return {p.name[len(stem) + 2 : -len(".in.py")]: p for p in sorted(case.parent.glob(f"{stem}__*.in.py"))}


def copy_siblings(case: Path, directory: Path) -> None:
    """The original sibling modules of `case`, as `<module>.py` in `directory`."""
    for module, path in sibling_modules(case).items():
        shutil.copy(path, directory / f"{module}.py")


def run_program(python: str | Path, program: Path, cwd: Path, timeout: int = 600, env: dict[str, str] | None = None) -> Run:
    """`python program` in `cwd`, forked from a server that imported TensorFlow once (forked.py),
    in `env` (`quiet_env()` by default)."""
    proc = forked.run(python, [str(program)], cwd, env or quiet_env(), timeout)
    return Run(str(python), program, proc.returncode, proc.stdout, proc.stderr)


def runs_wanted(program: Path) -> int:
    """`tfmigrate-harness: runs=N` in a program asks for N runs in the same directory (restores)."""
    match = re.search(r"tfmigrate-harness: runs=(\d+)", program.read_text(encoding="utf-8"))
    return int(match.group(1)) if match else 1


def run_repeated(python: str | Path, program: Path, cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run `runs_wanted(program)` times in `cwd`; the results of all runs, in order."""
    runs = [run_program(python, program, cwd, env=env).check() for _ in range(runs_wanted(program))]
    last = runs[-1]
    return Run(last.python, program, 0, "".join(r.stdout for r in runs), "".join(r.stderr for r in runs))


def continues_from_oracle(program: Path) -> bool:
    """`tfmigrate-harness: continue-from-oracle`: the migration must resume a TF1 model_dir."""
    return "tfmigrate-harness: continue-from-oracle" in program.read_text(encoding="utf-8")


def run_oracle_continued(original: Path, cwd: Path) -> tuple[list[dict], list[dict], Path]:
    """The oracle side of a continue-from-oracle comparison (run once per program, for both targets).

    A first TF 2.15 run in `cwd/first`, kept as the state a migration continues from, and a second
    run on a copy of it: what a second TF1 run gives. Returns (both runs' results, the first run's
    results, the kept directory).
    """
    first_dir, second_dir = cwd / "first", cwd / "second"
    first_dir.mkdir(parents=True)
    python, env = oracle_python(), oracle_run_env()
    first = run_program(python, original, first_dir, env=env).check().results
    shutil.copytree(first_dir, second_dir)
    second = run_program(python, original, second_dir, env=env).check().results
    return first + second, first, first_dir


def run_continued(
    original: Path, migrated: Path, cwd: Path, oracle: tuple[list[dict], list[dict], Path] | None = None
) -> tuple[list[dict], list[dict]]:
    """Two oracle runs vs an oracle run then a migrated run on a copy of its directory.

    Returns (expected, actual) result lists: the migrated program must continue from the TF1
    checkpoint the first run left exactly as a second TF1 run does. `oracle`: the result of
    `run_oracle_continued` for `original`, when it was run already.
    """
    expected, first, state = oracle if oracle is not None else run_oracle_continued(original, cwd / "oracle")
    continued = cwd / "continued"
    shutil.copytree(state, continued)
    second = run_program(sys.executable, migrated, continued).check().results
    return expected, first + second


def run_oracle(program: Path, cwd: Path) -> Run:
    """`program` on the oracle, in `oracle_run_env()` (one inter-op thread: TF1's read/write races
    pinned to reads first)."""
    return run_repeated(oracle_python(), program, cwd, oracle_run_env())


def run_current(program: Path, cwd: Path) -> Run:
    return run_repeated(sys.executable, program, cwd)


def compare(
    expected: list[dict[str, float]], actual: list[dict[str, float]], rtol: float = 1e-5, scales: dict[str, float] | None = None
) -> list[str]:
    """Differences between two result lists (empty when equivalent): each value within `rtol` of
    the larger of the two, or of its key's entry in `scales` where that is larger (a value that
    is one of a vector's entries, near 0, compared at the vector's scale)."""
    scales = scales or {}
    problems = []
    if not expected:
        problems.append("the original printed no results")
    if len(expected) != len(actual):
        problems.append(f"{len(expected)} results from the original, {len(actual)} from the migration")
    for index, (want, got) in enumerate(zip(expected, actual)):
        if set(want) != set(got):
            problems.append(f"result {index}: keys {sorted(want)} != {sorted(got)}")
            continue
        for key in sorted(want):
            a, b = float(want[key]), float(got[key])
            if not (math.isfinite(a) and math.isfinite(b)):
                if not (a == b or (math.isnan(a) and math.isnan(b))):
                    problems.append(f"result {index}: {key} = {a!r} on the oracle, {b!r} migrated")
                continue
            if abs(a - b) > rtol * max(abs(a), abs(b), scales.get(key, 0.0)) + 1e-12:
                problems.append(f"result {index}: {key} = {a!r} on the oracle, {b!r} migrated (rel {abs(a-b)/max(abs(a),1e-30):.2e})")
    return problems
