"""Generated tests: every `fixtures/<CODE>_<slug>/<case>.in.py` must migrate to its `.out.py`.

Estimator/TPUEstimator and canned-estimator cases (TFM201, TFM301, TFM401) also have a
`<case>.ctl.out.py`, the `--target ctl` output, checked the same way.

For each pair: the output matches, parses, and a second run changes nothing (idempotency). The
fixture directory's code names the rule the case is about; that rule must have applied (or, for a
no-op case whose `.out.py` equals its `.in.py`, the file must come out unchanged).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import FIXTURES as FIXTURES_DIR
from conftest import fixture_id, fixture_pairs
from tfmigrate.engine import Options, transform_source
from tfmigrate.exports import imported_names

PAIRS = fixture_pairs()
CTL = Options(target="ctl")


def _out(path: Path) -> Path:
    return path.with_name(path.name[: -len(".in.py")] + ".out.py")


def ctl_out(path: Path) -> Path:
    """`<case>.ctl.out.py`: the `--target ctl` output of `<case>.in.py`."""
    return path.with_name(path.name[: -len(".in.py")] + ".ctl.out.py")


def standalone_out(path: Path) -> Path:
    """`<case>.ctl-standalone.out.py`: the `--target ctl --standalone` output of `<case>.in.py`."""
    return path.with_name(path.name[: -len(".in.py")] + ".ctl-standalone.out.py")


def program_options(case: Path, options: Options = Options()) -> Options:
    """`options` with the names the other modules of `case`'s program (`<program>.in.py` and its
    `<program>__<module>.in.py`, as tests/equivalence/harness.py lays them out) import from it."""
    stem = case.name[: -len(".in.py")]
    program = stem.split("__", 1)[0]
    group = {program: case.with_name(program + ".in.py")}
    group.update({p.name[len(program) + 2 : -len(".in.py")]: p for p in case.parent.glob(f"{program}__*.in.py")})
    if len(group) == 1 or not group[program].exists():
        return options
    exported = imported_names((name, path.read_text(encoding="utf-8")) for name, path in group.items())
    names = exported.get(stem.split("__", 1)[1] if "__" in stem else program, frozenset())
    return replace(options, exported=names) if names else options


def _rule_code(case: Path) -> str:
    """The rule a fixture exercises: its directory's, or TFM101 for a program's own module
    (`<program>__<module>.in.py`, see tests/equivalence/harness.py), which TFM101 migrates."""
    stem = case.name[: -len(".in.py")]
    if "__" in stem and case.with_name(stem.split("__", 1)[0] + ".in.py").exists():
        return "TFM101"
    return case.parent.name.split("_", 1)[0]


@pytest.mark.parametrize("case", PAIRS, ids=[fixture_id(p) for p in PAIRS])
def test_fixture(case: Path, request: pytest.FixtureRequest) -> None:
    source = case.read_text(encoding="utf-8")
    result = transform_source(source, filename=str(case), options=program_options(case))
    assert result.error is None, result.error
    expected_path = _out(case)
    if request.config.getoption("--update-fixtures"):
        expected_path.write_text(result.output, encoding="utf-8")
    expected = expected_path.read_text(encoding="utf-8")
    assert result.output == expected
    ast.parse(result.output)
    code = _rule_code(case)
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
    once = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=program_options(case))
    twice = transform_source(once.output, filename=str(case), options=program_options(case))
    assert twice.error is None
    assert twice.output == once.output
    assert [t.as_dict() for t in twice.todos] == [t.as_dict() for t in once.todos]


def test_every_fixture_has_a_pair() -> None:
    for case in PAIRS:
        assert _out(case).exists(), f"{case} has no .out.py"
    assert PAIRS, "no fixtures found"


# -- `--target ctl`: `<case>.ctl.out.py` beside every Estimator/TPUEstimator/canned-estimator case ---

CTL_CODES = ("TFM201", "TFM301", "TFM401")
CTL_CASES = [p for p in PAIRS if p.parent.name.startswith(CTL_CODES)]


@pytest.mark.parametrize("case", CTL_CASES, ids=[fixture_id(p) for p in CTL_CASES])
def test_ctl_fixture(case: Path, request: pytest.FixtureRequest) -> None:
    source = case.read_text(encoding="utf-8")
    result = transform_source(source, filename=str(case), options=program_options(case, CTL))
    assert result.error is None, result.error
    expected_path = ctl_out(case)
    if request.config.getoption("--update-fixtures"):
        expected_path.write_text(result.output, encoding="utf-8")
    assert expected_path.exists(), f"{case.name} has no .ctl.out.py (pytest --update-fixtures writes it)"
    assert result.output == expected_path.read_text(encoding="utf-8")
    ast.parse(result.output)
    code = _rule_code(case)
    touched = set(result.rules) | {t.code for t in result.todos}
    assert code in touched, f"{code} neither applied nor left a TODO in {case.name} (applied: {result.rules})"


@pytest.mark.parametrize("case", CTL_CASES, ids=[fixture_id(p) for p in CTL_CASES])
def test_ctl_fixture_idempotent(case: Path) -> None:
    once = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=program_options(case, CTL))
    twice = transform_source(once.output, filename=str(case), options=program_options(case, CTL))
    assert twice.error is None
    assert twice.output == once.output
    assert [t.as_dict() for t in twice.todos] == [t.as_dict() for t in once.todos]


# Programs the Keras target migrates whose ctl form is not done yet: the ctl output carries precise
# TODOs for what is left (issue #6 stays open for these).
CTL_PENDING: dict[str, str] = {}


def test_every_keras_migration_has_a_ctl_one() -> None:
    """Every program the Keras target migrates without a TODO also migrates with `--target ctl`
    (except the pending ones, whose ctl output must say with TODOs what is left)."""
    missing = []
    for case in CTL_CASES:
        keras_out = _out(case).read_text(encoding="utf-8")
        if "TODO(tfmigrate" in keras_out or keras_out == case.read_text(encoding="utf-8"):
            continue
        ctl = ctl_out(case)
        clean = ctl.exists() and "TODO(tfmigrate" not in ctl.read_text(encoding="utf-8")
        if fixture_id(case) in CTL_PENDING:
            assert ctl.exists() and not clean, f"{fixture_id(case)}: pending ctl work must show as TODOs (or leave CTL_PENDING)"
        elif not clean:
            missing.append(fixture_id(case))
    assert not missing, f"migrated by the Keras target but not (cleanly) by --target ctl: {missing}"
    assert len(CTL_CASES) >= 20


# -- `--target ctl --standalone`: `<case>.ctl-standalone.out.py` for the cases that have one ------

STANDALONE = Options(target="ctl", standalone=True)
STANDALONE_CASES = [p for p in CTL_CASES if standalone_out(p).exists()]


@pytest.mark.parametrize("case", STANDALONE_CASES, ids=[fixture_id(p) for p in STANDALONE_CASES])
def test_ctl_standalone_fixture(case: Path, request: pytest.FixtureRequest) -> None:
    once = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=STANDALONE)
    assert once.error is None, once.error
    if request.config.getoption("--update-fixtures"):
        standalone_out(case).write_text(once.output, encoding="utf-8")
    assert once.output == standalone_out(case).read_text(encoding="utf-8")
    ast.parse(once.output)
    # The loop carries its host side: no runtime engine, no runtime base class.
    assert "tfm.ctl" not in once.output and "def train(self, data" in once.output
    twice = transform_source(once.output, filename=str(case), options=STANDALONE)
    assert twice.output == once.output


def test_there_are_standalone_fixtures() -> None:
    assert len(STANDALONE_CASES) >= 4


def test_standalone_loops_say_what_needs_the_runtime_loop() -> None:
    """Hooks, listeners, train_and_evaluate and export_saved_model need the runtime's EstimatorLoop:
    a `--standalone` migration leaves a TODO at each instead of dropping them."""
    case = FIXTURES_DIR / "TFM301_tpu_estimator_to_keras" / "training_hooks_logging.in.py"
    result = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=STANDALONE)
    messages = [t.message for t in result.todos]
    assert any("`model_fn`'s `training_hooks` needs" in m for m in messages), messages
    assert any("`train(hooks=...)` needs" in m for m in messages), messages
    case = FIXTURES_DIR / "TFM301_tpu_estimator_to_keras" / "train_and_evaluate_exporters.in.py"
    result = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=STANDALONE)
    messages = [t.message for t in result.todos]
    assert sum("`train_and_evaluate` needs" in m for m in messages) == 2, messages
    assert any("`export_saved_model` needs" in m for m in messages), messages
