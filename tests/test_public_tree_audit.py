"""scripts/public_tree_audit.py: the audit users run on a migrated tree (without --resolve: no TF)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import ROOT


def _audit():
    spec = importlib.util.spec_from_file_location("public_tree_audit", ROOT / "scripts" / "public_tree_audit.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": cell.splitlines(keepends=True)} for cell in cells]
                      + [{"cell_type": "markdown", "source": ["tf.estimator.Estimator in prose"]}]})


def test_notebooks_are_audited_through_their_code_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "nb").mkdir(parents=True)
    (src / "trainer.py").write_text("import tensorflow as tf\nest = tf.estimator.Estimator(model_fn)\n", encoding="utf-8")
    (src / "nb" / "guide.ipynb").write_text(
        _notebook("%matplotlib inline\nimport tensorflow as tf", "!pip install x\nest = tf.estimator.Estimator(model_fn)"),
        encoding="utf-8")
    (src / "nb" / "broken.ipynb").write_text("not json", encoding="utf-8")
    out.mkdir()  # nothing migrated: every file is read from the source tree

    assert _audit().main([str(src), str(out), "-v"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "files: 2 (1 not Python 3: nb/broken.ipynb)"
    assert "files with a failing reference and no TODO: 2 (2 references)" in lines
    assert "  nb/guide.ipynb:5: tf.estimator.Estimator" in lines  # (line 5 of the cells laid end to end; the markdown is prose)
    assert "  trainer.py:2: tf.estimator.Estimator" in lines


def test_notebook_code_comments_out_magics_and_shell_lines() -> None:
    code = _audit().notebook_code(_notebook("%time x = 1\n  !ls", "y = 2"))
    assert code == "# %time x = 1\n#   !ls\n\ny = 2\n"
    assert _audit().notebook_code("{") is None
