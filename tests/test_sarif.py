"""--sarif: a SARIF 2.1.0 log, valid against the OASIS schema (vendored in tests/data; no network)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from conftest import FIXTURES, ROOT
from tfmigrate.cli import main
from tfmigrate.registry import all_rules

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
TODO_PROGRAM = FIXTURES / "TFM401_canned_estimators" / "boosted_trees_todo.in.py"
NOTEBOOK = ROOT / "tests" / "data" / "notebooks" / "training.in.ipynb"


def run_sarif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, dict]:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["--sarif", "out.sarif", *args], catch_exceptions=False)
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return result.exit_code, log


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(PROGRAM, src / "train.py")
    shutil.copy(TODO_PROGRAM, src / "factory.py")
    shutil.copy(NOTEBOOK, src / "nb.ipynb")
    (src / "broken.py").write_text("import tensorflow as tf\ndef f(:\n")
    return tmp_path


def test_check_mode_log(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, log = run_sarif(project, monkeypatch, "--check", "src")
    assert code == 2
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "tfmigrate"
    assert [r["id"] for r in driver["rules"]] == [r.CODE for r in all_rules()]
    for rule, meta in zip(all_rules(), driver["rules"]):
        assert meta["name"] == rule.__name__
        assert meta["shortDescription"]["text"] == rule.SUMMARY
        assert meta["helpUri"] == f"https://github.com/tfmigrate/tfmigrate/blob/main/docs/rules.md#{rule.CODE.lower()}"
        assert meta["properties"]["safe"] is rule.SAFE
    results = run["results"]
    by_level = {level: [r for r in results if r["level"] == level] for level in ("note", "warning", "error")}
    # would-change locations (note), TODOs and skipped cells (warning), failures (error)
    notes = {(r["ruleId"], _uri(r), _line(r)) for r in by_level["note"]}
    assert ("TFM301", "src/train.py", 27) in notes and ("TFM302", "src/train.py", 48) in notes
    assert any(r["ruleId"] == "TFM401" and _uri(r) == "src/factory.py" for r in by_level["warning"])
    (error,) = by_level["error"]
    assert error["ruleId"] == "E001" and _uri(error) == "src/broken.py" and _line(error) == 2 and "ruleIndex" not in error
    for result in results:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        if result["ruleId"].startswith("TFM"):
            assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    # Notebook findings carry their cell.
    cell_results = [r for r in results if _uri(r) == "src/nb.ipynb"]
    assert cell_results and all("cell" in r["properties"] for r in cell_results)
    w001 = next(r for r in cell_results if r["ruleId"] == "W001")
    assert w001["level"] == "warning" and w001["properties"]["cell"] == 10
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"


def test_write_mode_has_no_would_change_notes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "src" / "broken.py").unlink()
    code, log = run_sarif(project, monkeypatch, "src")
    results = log["runs"][0]["results"]
    assert code == 1
    assert not [r for r in results if r["level"] == "note"]
    todos = [r for r in results if r["level"] == "warning" and _uri(r) == "src/factory.py"]
    written = (project / "src" / "factory.py").read_text().splitlines()
    assert todos and all("TODO(tfmigrate" in written[_line(r) - 1] for r in todos)


def test_safe_only_reports_unsafe_fixes_as_notes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, log = run_sarif(project, monkeypatch, "--safe-only", "src/train.py")
    notes = [r for r in log["runs"][0]["results"] if r["level"] == "note"]
    assert notes and {r["ruleId"] for r in notes} == {"TFM301"}
    assert all("unsafe fix available" in r["message"]["text"] for r in notes)


def test_sarif_to_stdout_and_no_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.py").write_text("print(1)\n")
    result = CliRunner().invoke(main, ["--check", "--sarif", "-", "plain.py"])
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []


def test_validator_rejects_a_broken_log() -> None:
    """The vendored schema really constrains: a result without a message is refused."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "X"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(bad)


def _uri(result: dict) -> str:
    return result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]


def _line(result: dict) -> int:
    return result["locations"][0]["physicalLocation"]["region"]["startLine"]
