"""The CLI contract: modes, exit codes, reports, per-file isolation, atomic writes, idempotency."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from tfmigrate.cli import main

PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
MIGRATED = FIXTURES / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.out.py"
# A program tfmigrate leaves a TODO in (its gradient-boosted trees have no Keras form, nor a hosted one).
TODO_PROGRAM = FIXTURES / "TFM401_canned_estimators" / "boosted_trees_todo.in.py"
# A program whose TPUEstimator goes to the hosted tier (returned from a factory).
HOSTED_PROGRAM = FIXTURES / "TFM301_tpu_estimator_to_keras" / "returned_estimator_todo.in.py"
NOOP = FIXTURES / "TFM101_compat_v1_to_v2" / "tf2_program_noop.in.py"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    shutil.copy(PROGRAM, root / "pkg" / "train.py")
    shutil.copy(NOOP, root / "pkg" / "tf2.py")
    (root / "pkg" / "plain.py").write_text("print('no tensorflow here')\n")
    (root / "README.txt").write_text("docs\n")
    # Things discovery must skip.
    for skipped in (".hidden", "build", "venv_dir"):
        (root / skipped).mkdir()
        shutil.copy(PROGRAM, root / skipped / "train.py")
    (root / "venv_dir" / "pyvenv.cfg").write_text("home = /usr\n")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_write_mode_migrates_in_place(tree: Path) -> None:
    code, out, err = invoke(str(tree))
    assert code == 1  # files changed
    assert (tree / "pkg" / "train.py").read_text() == MIGRATED.read_text()
    assert (tree / "pkg" / "tf2.py").read_bytes() == NOOP.read_bytes()
    assert (tree / ".hidden" / "train.py").read_bytes() == PROGRAM.read_bytes()
    assert (tree / "build" / "train.py").read_bytes() == PROGRAM.read_bytes()
    assert (tree / "venv_dir" / "train.py").read_bytes() == PROGRAM.read_bytes()
    assert "3 files: 1 migrated fully, 0 partly (0 TODOs left), 0 failed, 2 unchanged." in out
    # Idempotent: a second run finds nothing to do and exits 0.
    before = snapshot(tree)
    code, _, err = invoke(str(tree))
    assert code == 0, err
    assert snapshot(tree) == before


def test_diff_writes_nothing(tree: Path) -> None:
    before = snapshot(tree)
    code, out, _ = invoke("--diff", str(tree))
    assert code == 1
    assert snapshot(tree) == before
    assert out.startswith("--- a/") and "+class KerasModel(tf.keras.Model):" in out
    assert "-  estimator = tf.estimator.tpu.TPUEstimator(" in out


def test_check_exit_codes(tree: Path, tmp_path: Path) -> None:
    before = snapshot(tree)
    code, out, err = invoke("--check", str(tree))
    assert code == 1 and "would migrate" in out and err == ""  # diagnostics: stdout, like ruff
    assert snapshot(tree) == before
    code, _, _ = invoke("--check", str(NOOP))
    assert code == 0
    # TODOs left count as work remaining.
    todo = tmp_path / "todo.py"
    shutil.copy(TODO_PROGRAM, todo)
    invoke(str(todo))
    code, out, _ = invoke("--check", str(todo))
    assert code == 1 and "TFM401" in out


def test_out_dir_leaves_sources_alone(tree: Path, tmp_path: Path) -> None:
    before = snapshot(tree)
    out = tmp_path / "out"
    code, _, _ = invoke("--out-dir", str(out), str(tree))
    assert code == 1
    assert snapshot(tree) == before
    assert (out / "pkg" / "train.py").read_text() == MIGRATED.read_text()
    assert (out / "pkg" / "tf2.py").read_bytes() == NOOP.read_bytes()
    assert (out / "README.txt").read_text() == "docs\n"
    assert not (out / "build").exists()
    code, _, err = invoke("--out-dir", str(out), str(tree))
    assert code == 2 and "not empty" in err


def test_json_report(tree: Path, tmp_path: Path) -> None:
    todo = tree / "pkg" / "todo.py"
    shutil.copy(TODO_PROGRAM, todo)
    (tree / "pkg" / "broken.py").write_text("import tensorflow as tf\ndef f(:\n")
    report = tmp_path / "report.json"
    code, _, _ = invoke("--report", str(report), str(tree))
    assert code == 2
    data = json.loads(report.read_text())
    files = {Path(f["path"]).name: f for f in data["files"]}
    assert files["train.py"]["status"] == "migrated"
    assert files["train.py"]["rules"] == ["TFM301", "TFM302", "TFM101"]
    assert files["tf2.py"]["status"] == "unchanged"
    assert files["plain.py"]["status"] == "unchanged"
    assert files["todo.py"]["status"] == "todo"
    todo_codes = {t["code"] for t in files["todo.py"]["todos"]}
    assert "TFM401" in todo_codes
    tiers = [(e["estimator"], e["tier"]) for e in files["todo.py"]["estimators"]]
    assert tiers == [("BoostedTreesClassifier", "not migrated"), ("LinearClassifier", "idiomatic")]
    assert [(e["estimator"], e["tier"]) for e in files["train.py"]["estimators"]] == [("TPUEstimator", "idiomatic")]
    assert files["tf2.py"]["estimators"] == []
    first = files["todo.py"]["todos"][0]
    lines = todo.read_text().splitlines()
    assert "TODO(tfmigrate " + first["code"] in lines[first["line"] - 1]
    assert files["broken.py"]["status"] == "error"
    assert files["broken.py"]["errors"][0]["line"] == 2
    assert data["summary"]["error"] == 1 and data["summary"]["todo"] == 1
    assert data["summary"]["estimators"] == {"idiomatic": 2, "strategy": 0, "graph": 0, "not migrated": 1}


def test_estimator_tiers_in_report_and_summary(tmp_path: Path) -> None:
    hosted = tmp_path / "hosted.py"
    shutil.copy(HOSTED_PROGRAM, hosted)
    shutil.copy(PROGRAM, tmp_path / "idiomatic.py")
    report = tmp_path / "report.json"
    code, out, _ = invoke("--report", str(report), str(tmp_path))
    assert code == 1
    assert "tfmigrate: estimators: 1 idiomatic, 1 strategy" in out
    data = json.loads(report.read_text())
    files = {Path(f["path"]).name: f for f in data["files"]}
    (site,) = files["hosted.py"]["estimators"]
    assert (site["estimator"], site["tier"]) == ("TPUEstimator", "strategy")
    assert "tfm.estimator.tpu.TPUEstimator(" in hosted.read_text().splitlines()[site["line"] - 1]
    assert files["hosted.py"]["todos"] == []
    # A second run over the output sees the hosted site as it is, and changes nothing.
    code, out, _ = invoke("--check", str(hosted))
    assert code == 0 and "1 strategy" in out


def test_bad_files_are_isolated_and_untouched(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    shutil.copy(PROGRAM, good)
    bad_syntax = tmp_path / "bad_syntax.py"
    bad_syntax.write_bytes(b"import tensorflow.compat.v1 as tf\nx = tf.layers.dense(\n")
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes(b"import tensorflow.compat.v1 as tf\n# caf\xe9\nx = tf.nn.relu\n")
    originals = {p: p.read_bytes() for p in (bad_syntax, latin1)}
    code, out, err = invoke("-j", "2", str(tmp_path))
    assert code == 2
    assert good.read_text() == MIGRATED.read_text()
    for path, data in originals.items():
        assert path.read_bytes() == data
    assert "bad_syntax.py:3: error E001: syntax error" in err or "bad_syntax.py:2: error E001" in err
    assert "latin1.py: error E003: cannot decode" in err
    assert "1 failed" not in out and "2 failed" in out and "error E00" not in out  # errors: stderr only


def test_declared_encoding_and_permissions_are_kept(tmp_path: Path) -> None:
    src = tmp_path / "cookie.py"
    src.write_bytes(b"# -*- coding: latin-1 -*-\nimport tensorflow.compat.v1 as tf\nname = 'caf\xe9'\ny = tf.nn.relu\n")
    os.chmod(src, 0o750)
    code, _, _ = invoke(str(src))
    assert code == 1
    assert src.read_bytes() == b"# -*- coding: latin-1 -*-\nimport tensorflow as tf\nname = 'caf\xe9'\ny = tf.nn.relu\n"
    assert stat.S_IMODE(src.stat().st_mode) == 0o750
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tfmigrate-")]


@pytest.mark.slow  # about 45 s (every fixture, twice): scheduled first in a parallel run
def test_parallel_jobs_match_serial(tmp_path: Path) -> None:
    pairs = sorted((FIXTURES).glob("*/*.in.py"))
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    for root in (serial, parallel):
        root.mkdir()
        for i, case in enumerate(pairs):
            shutil.copy(case, root / f"case_{i:02d}.py")
    invoke(str(serial))
    invoke("-j", "2", str(parallel))
    for a in sorted(serial.iterdir()):
        assert a.read_bytes() == (parallel / a.name).read_bytes()


def test_rule_selection(tmp_path: Path) -> None:
    src = tmp_path / "p.py"
    shutil.copy(PROGRAM, src)
    code, out, _ = invoke("--diff", "--select", "TFM302", str(src))
    assert code == 1
    assert "+  tpu_config = tfm.TPUConfig(iterations_per_loop=5)" in out
    assert "class KerasModel" not in out
    code, out, _ = invoke("--diff", "--ignore", "TFM3", str(src))
    # Without the TPUEstimator rules TFM101 puts the estimator on the hosted tier, model_fn as written.
    assert "class KerasModel" not in out and "tfm.make_strategy" not in out
    assert "tfm.estimator.tpu.TPUEstimator(" in out and "tfm.estimator.tpu.RunConfig(" in out
    code, _, err = invoke("--select", "TFM9", str(src))
    assert code == 2 and "unknown rule selector" in err


def test_list_and_explain() -> None:
    code, out, _ = invoke("--list-rules")
    assert code == 0
    assert "TFM301" in out and "structural" in out and "TFM101" in out
    code, out, _ = invoke("--explain", "TFM301")
    assert code == 0 and "steps_per_execution" in out


def test_missing_path_and_ctl_target(tmp_path: Path) -> None:
    code, _, err = invoke(str(tmp_path / "nope"))
    assert code == 2 and "no such file" in err
    code, _, err = invoke("--check", "--target", "ctl", str(NOOP))
    assert code == 0, err
    code, _, err = invoke("--standalone", str(NOOP))
    assert code == 2 and "--standalone applies to --target ctl only" in err


def test_console_script_runs() -> None:
    exe = Path(sys.executable).with_name("tfmigrate")
    proc = subprocess.run([str(exe), "--check", str(NOOP)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "tfmigrate: 1 file: 0 would be migrated fully" in proc.stdout


PROGRAM_MAIN = FIXTURES / "TFM101_compat_v1_to_v2" / "contrib_alias_imported_elsewhere.in.py"
PROGRAM_LIB = FIXTURES / "TFM101_compat_v1_to_v2" / "contrib_alias_imported_elsewhere__layers_lib.in.py"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_name_another_module_imports_is_kept_as_the_fixture_keeps_it(tmp_path: Path, jobs: str) -> None:
    """Each module is migrated before the run knows what the others import from it; `layers_lib`'s
    rules ask about `slim` (to delete it as unused there), the trainer imports it: the run
    migrates `layers_lib` again knowing that, and writes what the fixture expects, once."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(PROGRAM_MAIN, root / "train.py")
    shutil.copy(PROGRAM_LIB, root / "layers_lib.py")
    for name in range(6):  # more modules than the pool's chunking needs to spread them
        shutil.copy(NOOP, root / f"other_{name}.py")
    report = tmp_path / "check.json"
    code, _, _ = invoke("-q", "-j", jobs, "--check", "--report", str(report), str(root))
    assert code == 1
    checked = {Path(f["path"]).name: f for f in json.loads(report.read_text())["files"]}
    assert checked["layers_lib.py"]["changed"] and checked["train.py"]["changed"]
    code, _, _ = invoke("-q", "-j", jobs, str(root))
    assert code == 1  # the TODO for `tf.contrib.rnn`, which `__all__` keeps
    assert (root / "layers_lib.py").read_text() == PROGRAM_LIB.with_name(PROGRAM_LIB.name.replace(".in.py", ".out.py")).read_text()
    assert (root / "train.py").read_text() == PROGRAM_MAIN.with_name(PROGRAM_MAIN.name.replace(".in.py", ".out.py")).read_text()


def test_a_module_alone_loses_the_alias_no_other_module_imports(tmp_path: Path) -> None:
    """Without the trainer nothing imports `slim` from `layers_lib`: its held output is written
    as first migrated, and differs from the program's in just that alias."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(PROGRAM_LIB, root / "layers_lib.py")
    shutil.copy(NOOP, root / "other.py")
    code, _, _ = invoke("-q", str(root))
    assert code == 1  # the TODO for `tf.contrib.rnn`, which `__all__` keeps
    alone = (root / "layers_lib.py").read_text()
    in_program = PROGRAM_LIB.with_name(PROGRAM_LIB.name.replace(".in.py", ".out.py")).read_text()
    assert alone != in_program and "slim" in in_program and "slim =" not in alone
