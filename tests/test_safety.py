"""Safety levels: every rule declares SAFE; --safe-only applies the safe rules and reports the others."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from tfmigrate.cli import main
from tfmigrate.engine import Options, transform_source
from tfmigrate.registry import RegistryError, all_rules, check_metadata
from tfmigrate.rule import Rule

PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "contrib_tf1x_program.in.py"


def invoke(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_rules_declare_safety() -> None:
    safety = {rule.CODE: rule.SAFE for rule in all_rules()}
    assert safety == {
        "TFM101": True, "TFM102": True, "TFM103": True, "TFM104": True, "TFM105": True, "TFM302": True, "TFM201": False, "TFM301": False, "TFM401": False,
    }
    for rule in all_rules():
        assert "SAFE" in vars(rule), f"{rule.CODE} must declare SAFE on its own class"


def test_registry_refuses_a_rule_without_safe() -> None:
    class Undeclared(Rule):
        """Docstring."""

        CODE = "TFM999"
        SUMMARY = "summary"

    with pytest.raises(RegistryError, match="must declare SAFE"):
        check_metadata(Undeclared)


def test_list_rules_shows_safety_and_targets() -> None:
    code, out, _ = invoke("--list-rules")
    assert code == 0
    lines = {line.split()[0]: line.split() for line in out.splitlines()}
    assert lines["TFM301"][1:4] == ["unsafe", "structural", "ctl,keras"]
    assert lines["TFM101"][1:4] == ["safe", "mechanical", "ctl,keras"]
    assert lines["TFM302"][1] == "safe" and lines["TFM201"][1] == "unsafe"


def test_engine_safe_only_applies_safe_rules_and_reports_unsafe_ones() -> None:
    source = PROGRAM.read_text()
    full = transform_source(source)
    safe = transform_source(source, options=Options(safe_only=True))
    assert "TFM301" in full.rules and "TFM301" not in safe.rules
    assert set(safe.rules) == {"TFM302", "TFM101"}
    assert "class KerasModel" not in safe.output and "tfm.RunConfig(" in safe.output
    assert [(f.code, f.line, f.end_line) for f in safe.unsafe_fixes] == [("TFM301", 8, 17), ("TFM301", 26, 28)]
    assert not full.unsafe_fixes
    # The unsafe rule's hunks are where the full migration changes those lines.
    assert {(f.line, f.end_line) for f in full.changes if f.code == "TFM301"} >= {(8, 17), (26, 28)}
    # In the written (safe-only) output, the same statements are found again.
    out_lines = safe.output.splitlines()
    moved = {f.line: f for f in safe.unsafe_fixes_in_output}
    assert any(out_lines[line - 1].startswith("def model_fn(") for line in moved)
    # (the safe rules alone leave the TPUEstimator to the hosted tier)
    assert any(out_lines[line - 1].lstrip().startswith("classifier = tfm.estimator.tpu.TPUEstimator(") for line in moved)
    # Dry runs leave no trace: no TODO or import from TFM301 in the output.
    assert "TFM301" not in safe.output


def test_cli_safe_only_check_write_and_config(tmp_path: Path) -> None:
    src = tmp_path / "p.py"
    shutil.copy(PROGRAM, src)
    code, out, _ = invoke("--check", "--safe-only", str(src))  # diagnostics on stdout, like ruff's
    assert code == 1
    assert f"{src}:8: TFM301 unsafe fix available (lines 8-17; not applied under --safe-only)" in out
    assert f"{src}:22: TFM302 would change line 22" in out
    assert "unsafe fixes not applied (--safe-only): TFM301 2" in out
    report = tmp_path / "r.json"
    code, _, err = invoke("--safe-only", "--report", str(report), str(src))
    assert code == 1
    assert "class KerasModel" not in src.read_text() and "tfm.RunConfig(" in src.read_text()
    data = json.loads(report.read_text())
    assert data["safe_only"] is True and data["summary"]["unsafe_fixes_by_rule"] == {"TFM301": 2}
    (entry,) = data["files"]
    written = src.read_text().splitlines()
    for fix in entry["unsafe_fixes"]:  # write mode: lines of the written file
        assert fix["code"] == "TFM301"
        assert written[fix["line"] - 1].lstrip().startswith(("def model_fn(", "classifier ="))
    # safe-only from [tool.tfmigrate]; --no-safe-only overrides it.
    shutil.copy(PROGRAM, src)
    (tmp_path / "pyproject.toml").write_text("[tool.tfmigrate]\nsafe-only = true\n")
    code, out, _ = invoke("--check", str(src))
    assert "unsafe fix available" in out
    code, out, _ = invoke("--check", "--no-safe-only", str(src))
    assert "unsafe fix available" not in out and f"{src}:8: TFM301 would change lines 8-17" in out
    # The safe rules alone leave a runnable program: its TPUEstimator on the hosted tier, no TODO,
    # so a second check finds nothing to do (the Keras rewrite is not offered on hosted code).
    code, _, _ = invoke(str(src))
    code, _, _ = invoke("--check", str(src))
    assert code == 0 and "tfm.estimator.tpu.TPUEstimator(" in src.read_text() and "TODO" not in src.read_text()
