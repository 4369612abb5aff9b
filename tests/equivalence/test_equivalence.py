"""Equivalence: every runnable fixture gives the oracle's numbers once migrated.

A fixture is runnable when its `.in.py` prints `eval_results` lines. The test runs the original
on the oracle (TF 2.15 + Estimator), migrates it with the codemod (which must give the checked-in
`.out.py`), runs that on current TF with tfmigrate.runtime, and compares every result within
1e-5 relative, keys included.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import fixture_id, fixture_pairs
from tfmigrate.engine import transform_source

from .harness import RESULT_PREFIX, compare, continues_from_oracle, parse_results, run_continued, run_current, run_oracle

pytestmark = [pytest.mark.oracle, pytest.mark.tf]

PROGRAMS = [p for p in fixture_pairs() if RESULT_PREFIX.strip() in p.read_text(encoding="utf-8")]


def test_there_are_equivalence_programs() -> None:
    assert len(PROGRAMS) >= 7


@pytest.mark.parametrize("case", PROGRAMS, ids=[fixture_id(p) for p in PROGRAMS])
def test_migration_matches_oracle(case: Path, tmp_path: Path) -> None:
    original_dir, migrated_dir = tmp_path / "original", tmp_path / "migrated"
    original_dir.mkdir()
    migrated_dir.mkdir()
    original = original_dir / "program.py"
    shutil.copy(case, original)
    migrated_text = transform_source(case.read_text(encoding="utf-8"), filename=str(case)).output
    assert migrated_text == case.with_name(case.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")
    if "tfmigrate-harness: todos-allowed" not in case.read_text(encoding="utf-8"):
        assert "TODO(tfmigrate" not in migrated_text
    migrated = migrated_dir / "program.py"
    migrated.write_text(migrated_text, encoding="utf-8")

    if continues_from_oracle(case):
        want, got = run_continued(original, migrated, tmp_path)
    else:
        want = run_oracle(original, original_dir).results
        got = run_current(migrated, migrated_dir).results
    problems = compare(want, got)
    assert not problems, "\n".join(problems)
    # The original really trained: the loss moved between evaluations.
    assert len({r["loss"] for r in want if "loss" in r}) >= 2


def test_compare_catches_differences() -> None:
    a = parse_results("eval_results {'global_step': 7.0, 'loss': 1.0}\n")
    assert compare(a, a) == []
    assert compare(a, [{"global_step": 7.0, "loss": 1.00002}])
    assert compare(a, [{"global_step": 7.0}])
    assert compare(a, [])
    assert compare(a, [{"global_step": 7.0, "loss": 1.000001}]) == []
