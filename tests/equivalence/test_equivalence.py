"""Equivalence: every runnable fixture gives the oracle's numbers once migrated.

A fixture is runnable when its `.in.py` prints `eval_results` lines. The test runs the original
on the oracle (TF 2.15 + Estimator), migrates it with the codemod (which must give the checked-in
`.out.py`), runs that on current TF with tfmigrate.runtime, and compares every result within
1e-5 relative, keys included. Estimator/TPUEstimator programs are checked for both targets: the
Keras one (`.out.py`) and the custom training loop (`--target ctl`, `.ctl.out.py`), canned estimators too; the oracle's
results are computed once per program for both.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import fixture_id, fixture_pairs
from test_fixtures import CTL_CODES, CTL_PENDING
from tfmigrate.engine import Options, transform_source

from .harness import (
    RESULT_PREFIX,
    compare,
    continues_from_oracle,
    copy_siblings,
    sibling_modules,
    parse_results,
    run_continued,
    run_current,
    run_oracle,
    run_oracle_continued,
)

pytestmark = [pytest.mark.oracle, pytest.mark.tf]

PROGRAMS = [p for p in fixture_pairs() if RESULT_PREFIX.strip() in p.read_text(encoding="utf-8")]
# Programs whose ctl form is pending (tests/test_fixtures.py's CTL_PENDING: their ctl output says
# with TODOs what is left), or is the Keras form itself, are not run as ctl programs.


def _ctl_run_is_the_keras_run(case: Path) -> bool:
    """`--target ctl` migrates `case` and its sibling modules to the Keras target's text, file for
    file (a hosted program: both targets leave the model_fn as written; tests/test_fixtures.py
    checks both outputs): running it again would run the same program."""
    def output(source: Path, suffix: str) -> bytes:
        return source.with_name(source.name.replace(".in.py", suffix)).read_bytes()

    return all(output(f, ".ctl.out.py") == output(f, ".out.py") for f in [case, *sibling_modules(case).values()])


CTL_PROGRAMS = [
    p for p in PROGRAMS
    if p.parent.name.startswith(CTL_CODES) and fixture_id(p) not in CTL_PENDING and not _ctl_run_is_the_keras_run(p)
]
_ORACLE: dict[Path, list[dict]] = {}
_CONTINUED: dict[Path, tuple[list[dict], list[dict], Path]] = {}
_ORACLE_DIRS = Path(tempfile.mkdtemp(prefix="tfmigrate-oracle-continued-"))
atexit.register(shutil.rmtree, _ORACLE_DIRS, True)


def program_group(case: Path) -> str:
    """The xdist group of `case`'s tests (both targets, its strategy runs): one worker, one oracle cache."""
    return f"program:{fixture_id(case)}"


def program_params(cases: list[Path]) -> list:
    return [pytest.param(case, id=fixture_id(case), marks=pytest.mark.xdist_group(program_group(case))) for case in cases]


def oracle_continued(case: Path) -> tuple[list[dict], list[dict], Path]:
    """The oracle side of `case`'s continue-from-oracle comparison, run once per test session."""
    if case not in _CONTINUED:
        directory = _ORACLE_DIRS / f"{case.parent.name}-{case.name}"
        directory.mkdir()
        shutil.copy(case, directory / "program.py")
        copy_siblings(case, directory)
        _CONTINUED[case] = run_oracle_continued(directory / "program.py", directory)
    return _CONTINUED[case]


def oracle_results(case: Path) -> list[dict]:
    """The oracle's results for `case`, run once per test session (in a directory of its own)."""
    if case not in _ORACLE:
        directory = Path(tempfile.mkdtemp(prefix="tfmigrate-oracle-"))
        try:
            shutil.copy(case, directory / "program.py")
            copy_siblings(case, directory)
            _ORACLE[case] = run_oracle(directory / "program.py", directory).results
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    return _ORACLE[case]


def check_migration(case: Path, tmp_path: Path, *, options: Options, expected_name: str) -> None:
    """Migrates `case` (which must give `expected_name`), runs it and compares it with the oracle."""
    original_dir, migrated_dir = tmp_path / "original", tmp_path / "migrated"
    original_dir.mkdir()
    migrated_dir.mkdir()
    original = original_dir / "program.py"
    shutil.copy(case, original)
    migrated_text = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=options).output
    assert migrated_text == case.with_name(case.name.replace(".in.py", expected_name)).read_text(encoding="utf-8")
    if "tfmigrate-harness: todos-allowed" not in case.read_text(encoding="utf-8"):
        assert "TODO(tfmigrate" not in migrated_text
    migrated = migrated_dir / "program.py"
    migrated.write_text(migrated_text, encoding="utf-8")
    copy_siblings(case, original_dir)
    for module, sibling in sibling_modules(case).items():  # migrated in the same run as the program
        text = transform_source(sibling.read_text(encoding="utf-8"), filename=str(sibling), options=options).output
        assert text == sibling.with_name(sibling.name.replace(".in.py", expected_name)).read_text(encoding="utf-8")
        assert "TODO(tfmigrate" not in text
        (migrated_dir / f"{module}.py").write_text(text, encoding="utf-8")

    if continues_from_oracle(case):
        want, got = run_continued(original, migrated, tmp_path, oracle_continued(case))
    else:
        want = oracle_results(case)
        got = run_current(migrated, migrated_dir).results
    problems = compare(want, got)
    assert not problems, "\n".join(problems)
    # The original really trained: the loss moved between evaluations.
    assert len({r["loss"] for r in want if "loss" in r}) >= 2


def test_there_are_equivalence_programs() -> None:
    assert len(PROGRAMS) >= 7


@pytest.mark.parametrize("case", program_params(PROGRAMS))
def test_migration_matches_oracle(case: Path, tmp_path: Path) -> None:
    check_migration(case, tmp_path, options=Options(), expected_name=".out.py")


@pytest.mark.parametrize("case", program_params(CTL_PROGRAMS))
def test_ctl_migration_matches_oracle(case: Path, tmp_path: Path) -> None:
    """`--target ctl`: the custom training loop gives the oracle's numbers too."""
    check_migration(case, tmp_path, options=Options(target="ctl"), expected_name=".ctl.out.py")


STANDALONE_PROGRAMS = [p for p in CTL_PROGRAMS if p.with_name(p.name.replace(".in.py", ".ctl-standalone.out.py")).exists()]


@pytest.mark.parametrize("case", program_params(STANDALONE_PROGRAMS))
def test_ctl_standalone_migration_matches_oracle(case: Path, tmp_path: Path) -> None:
    """`--target ctl --standalone`: the loop carrying its own host side gives the oracle's numbers."""
    check_migration(case, tmp_path, options=Options(target="ctl", standalone=True), expected_name=".ctl-standalone.out.py")


def test_ctl_programs_run_several_steps_per_loop() -> None:
    """The ctl equivalence programs exercise `iterations_per_loop` > 1 (multi-step `train_steps` calls)."""
    import re

    several = [p for p in CTL_PROGRAMS if any(int(n) > 1 for n in re.findall(r"iterations_per_loop=(\d+)", p.read_text()))]
    assert len(several) >= 20, [p.name for p in several]


def test_compare_catches_differences() -> None:
    a = parse_results("eval_results {'global_step': 7.0, 'loss': 1.0}\n")
    assert compare(a, a) == []
    assert compare(a, [{"global_step": 7.0, "loss": 1.00002}])
    assert compare(a, [{"global_step": 7.0}])
    assert compare(a, [])
    assert compare(a, [{"global_step": 7.0, "loss": 1.000001}]) == []
