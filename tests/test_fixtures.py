"""Generated tests: every `fixtures/<CODE>_<slug>/<case>.in.py` must migrate to its `.out.py`.

For each pair: the output matches, parses, and a second run changes nothing (idempotency). The
fixture directory's code names the rule the case is about; that rule must have applied (or, for a
no-op case whose `.out.py` equals its `.in.py`, the file must come out unchanged).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import fixture_id, fixture_pairs
from tfmigrate.engine import transform_source

PAIRS = fixture_pairs()


def _out(path: Path) -> Path:
    return path.with_name(path.name[: -len(".in.py")] + ".out.py")


@pytest.mark.parametrize("case", PAIRS, ids=[fixture_id(p) for p in PAIRS])
def test_fixture(case: Path, request: pytest.FixtureRequest) -> None:
    source = case.read_text(encoding="utf-8")
    result = transform_source(source, filename=str(case))
    assert result.error is None, result.error
    expected_path = _out(case)
    if request.config.getoption("--update-fixtures"):
        expected_path.write_text(result.output, encoding="utf-8")
    expected = expected_path.read_text(encoding="utf-8")
    assert result.output == expected
    ast.parse(result.output)
    code = case.parent.name.split("_", 1)[0]
    if expected != source:
        touched = set(result.rules) | {t.code for t in result.todos}
        assert code in touched, f"{code} neither applied nor left a TODO in {case.name} (applied: {result.rules})"
    todo_file = case.with_name(case.name[: -len(".in.py")] + ".todos.txt")
    if todo_file.exists():
        wanted = [line for line in todo_file.read_text(encoding="utf-8").splitlines() if line.strip()]
        got = [f"{t.line}: {t.code} {t.message}" for t in result.todos]
        if request.config.getoption("--update-fixtures"):
            todo_file.write_text("\n".join(got) + "\n", encoding="utf-8")
            wanted = got
        assert got == wanted


@pytest.mark.parametrize("case", PAIRS, ids=[fixture_id(p) for p in PAIRS])
def test_fixture_idempotent(case: Path) -> None:
    once = transform_source(case.read_text(encoding="utf-8"), filename=str(case))
    twice = transform_source(once.output, filename=str(case))
    assert twice.error is None
    assert twice.output == once.output
    assert [t.as_dict() for t in twice.todos] == [t.as_dict() for t in once.todos]


def test_every_fixture_has_a_pair() -> None:
    for case in PAIRS:
        assert _out(case).exists(), f"{case} has no .out.py"
    assert PAIRS, "no fixtures found"
