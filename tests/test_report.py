"""What a run tells people: per-rule changed lines, check-mode lines, the summary and the progress bar."""

from __future__ import annotations

import difflib
import io
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from tfmigrate.cli import main
from tfmigrate.engine import transform_source
from tfmigrate.report import PROGRESS_MIN_FILES, Progress, plural, timing_line
from tfmigrate.runner import FileOutcome

# Every non-TPU fixture and a spread of TPUEstimator ones (each transform takes a while).
SAMPLE = [
    p
    for p in sorted(FIXTURES.glob("*/*.in.py"))
    if not p.parent.name.startswith("TFM301")
    or p.name.split(".")[0] in {"guide_adagrad", "contrib_tf1x_program", "returned_estimator_todo", "predict_branch_classifier"}
]


@pytest.mark.parametrize("case", SAMPLE, ids=[f"{p.parent.name}/{p.name}" for p in SAMPLE])
def test_changes_cover_every_changed_line(case: Path) -> None:
    source = case.read_text(encoding="utf-8")
    result = transform_source(source)
    spans = [(c.line, c.end_line or c.line) for c in result.changes]
    covered = {line for lo, hi in spans for line in range(lo, hi + 1)}
    a, b = source.splitlines(), result.output.splitlines()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        wanted = range(i1 + 1, i2 + 1) if i2 > i1 else [min(i1 + 1, len(a))]
        missing = [line for line in wanted if line not in covered]
        assert not missing, f"changed lines {missing} of {case.name} are not attributed to a rule"
    codes = {c.code for c in result.changes}
    assert codes <= set(result.rules) | {t.code for t in result.todos}
    if result.output == source:
        assert not result.changes
    for change in result.changes:
        assert change.message and 1 <= change.line <= (change.end_line or change.line) <= max(len(a), 1)


def test_a_mechanical_only_file_names_only_mechanical_rules() -> None:
    result = transform_source((FIXTURES / "TFM302_tpu_config_to_runtime" / "config_module.in.py").read_text())
    assert {c.code for c in result.changes} == {"TFM101", "TFM302"}
    lines = {c.code: [] for c in result.changes}
    for c in result.changes:
        lines[c.code].append(c.line)
    assert lines["TFM101"] == [2]  # import tensorflow.compat.v1 as tf
    assert 9 in lines["TFM302"] and 17 in lines["TFM302"]  # InputPipelineConfig, RunConfig(


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_summary_counts_files_and_todos_by_rule(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py", tmp_path / "a.py")
    # A boosted-trees estimator is the one kind left unmigrated (a TODO); the rest migrate.
    shutil.copy(FIXTURES / "TFM401_canned_estimators" / "boosted_trees_todo.in.py", tmp_path / "b.py")
    (tmp_path / "c.py").write_text("print('hi')\n")
    (tmp_path / "d.py").write_text("import tensorflow as tf\ndef f(:\n")
    code, out, err = invoke("--check", str(tmp_path))
    assert code == 2
    lines = out.splitlines()  # diagnostics and the summary: stdout (like ruff); errors: stderr
    assert "tfmigrate: 4 files: 1 would be migrated fully, 1 partly (1 TODO left), 1 failed, 1 unchanged." in lines
    assert "tfmigrate: estimators: 2 idiomatic, 1 not migrated" in lines
    assert "tfmigrate: TODOs by rule: TFM401 1" in lines
    assert f"would partly migrate {tmp_path / 'b.py'} (1 TODO)" in lines
    assert re.fullmatch(r"tfmigrate: 4 files, [\d,]+ lines in [\d.]+ s( \([\d,]+ lines/s\))?", lines[-1])  # timing closes the run
    assert lines.index("tfmigrate: TODOs by rule: TFM401 1") == len(lines) - 2
    # Check mode lists every place that would change, as path:line: CODE, sorted by line, each
    # saying what would change (not the rule's summary).
    a_lines = [line for line in lines if line.startswith(f"{tmp_path / 'a.py'}:")]
    assert a_lines and all(" would change " in line for line in a_lines)
    assert any(line.endswith("TFM302 would change lines 48-49: tf.estimator.tpu.TPUConfig -> tfm.TPUConfig; tf.estimator.tpu.RunConfig -> tfm.RunConfig") for line in a_lines), a_lines
    assert any("TPUEstimator -> Keras model (idiomatic tier)" in line for line in a_lines)
    numbers = [int(line.split(":")[1]) for line in a_lines]
    assert numbers == sorted(numbers)
    assert f"{tmp_path / 'd.py'}:2: error E001: syntax error" in err and "error E001" not in out
    # -q: errors and the summary only
    code, out, err = invoke("--check", "-q", str(tmp_path))
    assert "would change line" not in out and "error E001" in err and "TODOs by rule" in out
    # --statistics: counts per (code, message), the most frequent first, instead of the list.
    code, out, err = invoke("--check", "--statistics", str(tmp_path))
    assert code == 2 and "would change line" not in out
    table = [line.split("\t") for line in out.splitlines() if "\t" in line]
    counts = [int(count.replace(",", "")) for count, _, _ in table]
    assert counts == sorted(counts, reverse=True)
    assert any(row[1] == "TFM401" and row[2].startswith("TODO: `BoostedTreesClassifier`") for row in table)
    assert any(row[1] == "E001" for row in table)


def test_write_mode_does_not_list_would_change_lines(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py", tmp_path / "a.py")
    code, out, err = invoke(str(tmp_path))
    assert code == 1 and "would change" not in out and f"migrated {tmp_path / 'a.py'}" in out.splitlines()


def test_partly_migrated_files_say_so(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py", tmp_path / "a.py")
    shutil.copy(FIXTURES / "TFM401_canned_estimators" / "boosted_trees_todo.in.py", tmp_path / "b.py")
    code, out, _ = invoke(str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert f"migrated {tmp_path / 'a.py'}" in lines and f"partly migrated {tmp_path / 'b.py'} (1 TODO)" in lines
    assert "tfmigrate: 2 files: 1 migrated fully, 1 partly (1 TODO left), 0 failed, 0 unchanged." in lines


def test_plurals() -> None:
    assert plural(1, "file") == "1 file" and plural(2, "file") == "2 files" and plural(12000, "line") == "12,000 lines"
    assert timing_line([FileOutcome("a.py", "unchanged", lines=52811)], 4.4) == "tfmigrate: 1 file, 52,811 lines in 4.4 s (12,002 lines/s)"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _outcomes(n: int) -> list[FileOutcome]:
    return [FileOutcome(f"f{i}.py", "unchanged") for i in range(n)]


@pytest.mark.parametrize("tty, files, drawn", [(True, PROGRESS_MIN_FILES + 5, True), (True, 3, False), (False, 50, False)])
def test_progress_bar_only_for_long_runs_on_a_terminal(tty: bool, files: int, drawn: bool) -> None:
    stream = _Tty() if tty else io.StringIO()
    progress = Progress(stream, enabled=Progress.wanted(stream))
    progress.start(files)
    for outcome in _outcomes(files):
        progress.advance(outcome)
    progress.close()
    text = stream.getvalue()
    assert (f"{files}/{files}" in text) is drawn
    assert bool(text) is drawn
    assert not Progress.wanted(_Tty(), quiet=True)


def test_cli_under_test_never_draws_a_bar(tmp_path: Path) -> None:
    for i in range(PROGRESS_MIN_FILES + 2):
        (tmp_path / f"f{i}.py").write_text("x = 1\n")
    code, _, err = invoke("--check", str(tmp_path))
    assert code == 0 and "tfmigrate  [" not in err and f"{PROGRESS_MIN_FILES + 2}/" not in err
