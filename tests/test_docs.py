"""The rule reference is generated from the rules: it must be current, complete and shipped."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, ROOT
from tfmigrate import docs
from tfmigrate.cli import main
from tfmigrate.registry import all_rules
from tfmigrate.rule import Rule

RULES_MD = ROOT / "docs" / "rules.md"


def test_rules_md_is_current() -> None:
    assert RULES_MD.read_text(encoding="utf-8") == docs.render_all(), (
        "docs/rules.md is stale: run `python -m tfmigrate.docs`"
    )


def test_check_flag_detects_a_stale_file(tmp_path: Path) -> None:
    out = tmp_path / "rules.md"
    out.write_text(RULES_MD.read_text(encoding="utf-8").replace("TFM301", "TFM999", 1), encoding="utf-8")
    assert docs.main(["--check", "--output", str(out)]) == 1
    assert docs.main(["--output", str(out)]) == 0
    assert docs.main(["--check", "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == RULES_MD.read_text(encoding="utf-8")


def test_every_rule_is_documented_with_an_example() -> None:
    text = RULES_MD.read_text(encoding="utf-8")
    for rule in all_rules():
        docs.check_rule(rule)  # SUMMARY, docstring, a fixture directory with a changing pair
        section = text.split(f"\n## {rule.CODE}\n", 1)[1].split("\n## ", 1)[0]
        assert rule.SUMMARY in section
        assert ("· safe ·" if rule.SAFE else "· unsafe ·") in section
        assert (docs.SAFE_NOTE if rule.SAFE else docs.UNSAFE_NOTE) in section  # what the level means
        assert "Before:" in section and "After:" in section
        name, before, after = docs.example(rule)
        assert before != after and before.rstrip("\n") in section and after.rstrip("\n") in section
        assert f"[{rule.CODE}](#{rule.CODE.lower()})" in text  # the table links the anchor SARIF uses


def test_example_choice() -> None:
    by_code = {r.CODE: r for r in all_rules()}
    assert docs.example(by_code["TFM301"])[0] == "guide_adagrad"  # named by the rule
    assert docs.example(by_code["TFM101"])[0] == "bare_tf1_symbols"  # the smallest pair that changes


class _NoSummary(Rule):
    """Docstring."""

    CODE = "TFM101"
    SUMMARY = ""
    SAFE = True


class _NoFixtures(Rule):
    """Docstring."""

    CODE = "TFM998"
    SUMMARY = "a rule nobody wrote fixtures for"
    SAFE = True


class _NoDocstring(Rule):
    CODE = "TFM101"
    SUMMARY = "summary"
    SAFE = True


@pytest.mark.parametrize(
    "rule, message",
    [(_NoSummary, "SUMMARY and a docstring"), (_NoDocstring, "SUMMARY and a docstring"), (_NoFixtures, "no fixtures/TFM998_")],
)
def test_incomplete_rules_are_refused(rule: type[Rule], message: str) -> None:
    with pytest.raises(docs.DocsError, match=message):
        docs.render_rule(rule)


def test_the_rule_reference_links_each_rule_to_its_module() -> None:
    """One hop from the rule list to the code: each rule's row and section name its module, which
    defines the rule class (TPUEstimator -> TPUStrategy is in rules/tpu_estimator_to_keras.py)."""
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in all_rules():
        module = docs.rule_module(rule)
        assert (ROOT / module).read_text(encoding="utf-8").count(f"class {rule.__name__}(") == 1, module
        assert f"source: [`{module}`]" in text and f"/blob/main/{module})" in text
    assert docs.rule_module(next(r for r in all_rules() if r.CODE == "TFM301")) == "rules/tpu_estimator_to_keras.py"


def test_every_rule_has_a_fixture_directory() -> None:
    dirs = {p.name.split("_", 1)[0] for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert {r.CODE for r in all_rules()} <= dirs


def test_explain_prints_the_docs_section() -> None:
    for rule in all_rules():
        result = CliRunner().invoke(main, ["--explain", rule.CODE.lower()])
        assert result.exit_code == 0
        assert result.stdout == docs.render_rule(rule) + "\n"
    result = CliRunner().invoke(main, ["--explain", "TFM301"])
    assert "unsafe" in result.stdout and "class KerasModel(tf.keras.Model):" in result.stdout
    result = CliRunner().invoke(main, ["--explain", "TFM999"])
    assert result.exit_code == 2 and "unknown rule" in result.stderr


def test_wheel_ships_the_fixtures(tmp_path: Path) -> None:
    """--explain in a non-editable install (e.g. the pre-commit hook's) reads fixtures as package data."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("tfmigrate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "tfmigrate/fixtures/TFM301_tpu_estimator_to_keras/guide_adagrad.in.py" in names
    assert "tfmigrate/fixtures/TFM301_tpu_estimator_to_keras/guide_adagrad.out.py" in names
    assert "tfmigrate/docs.py" in names and "tfmigrate/notebook.py" in names


def test_every_error_and_warning_code_is_documented_and_explained() -> None:
    """Each E/W code the tool can emit has a docs/rules.md section and `--explain` prints it."""
    import re

    from click.testing import CliRunner

    from tfmigrate.cli import main
    from tfmigrate.docs import DIAGNOSTICS

    root = Path(__file__).resolve().parent.parent
    emitted = set()
    for path in (root / "migrate").glob("*.py"):
        emitted |= set(re.findall(r'"([EW]\d{3})"', path.read_text(encoding="utf-8")))
    documented = {code for code, _, _ in DIAGNOSTICS}
    assert emitted and emitted <= documented, emitted - documented
    rules_md = (root / "docs" / "rules.md").read_text(encoding="utf-8")
    for code in sorted(documented):
        assert f"\n## {code}\n" in rules_md
        result = CliRunner().invoke(main, ["--explain", code.lower()])
        assert result.exit_code == 0 and result.output.startswith(f"## {code}") and "What to do" in result.output
    result = CliRunner().invoke(main, ["--explain", "TFM201"])
    assert "When it declines, and what to do" in result.output
    assert CliRunner().invoke(main, ["--explain", "E123"]).exit_code == 2


def test_pyproject_lists_every_fixture_directory() -> None:
    """A fixture directory missing from `packages` makes setuptools print a BuildBackendWarning
    banner per directory on every install (`./run example`)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = {p for p in config["packages"] if p.startswith("tfmigrate.fixtures.")}
    on_disk = {f"tfmigrate.fixtures.{d.name}" for d in FIXTURES.iterdir() if d.is_dir() and not d.name.startswith("_")}
    assert listed == on_disk
    assert "tfmigrate.rules.data" in config["packages"]


def test_pyproject_lists_every_code_package() -> None:
    """A package missing from `packages` is left out of a built wheel: an editable install (this
    suite's) still imports it, `pip install "tfmigrate[runtime]"` would not (runtime/model_fn was
    missing so)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    homes = {"migrate": "tfmigrate", "runtime": "tfmigrate.runtime", "rules": "tfmigrate.rules"}
    on_disk = {
        ".".join([package, *init.parent.relative_to(ROOT / top).parts])
        for top, package in homes.items()
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert on_disk - set(config["packages"]) == set()
