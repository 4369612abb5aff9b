"""Notebooks: code cells migrate as one program; everything else in the .ipynb stays as it was.

Golden files: tests/data/notebooks/<case>.in.ipynb -> <case>.out.ipynb (`pytest --update-fixtures`
rewrites the .out.ipynb files).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES as FIXTURES_DIR
from conftest import ROOT
from tfmigrate.cli import main
from tfmigrate.notebook import _indented, _mask, _syntax_error, dump_notebook, transform_notebook

DATA = ROOT / "tests" / "data" / "notebooks"
CASES = sorted(p.name[: -len(".in.ipynb")] for p in DATA.glob("*.in.ipynb"))
TRAINING = DATA / "training.in.ipynb"
FACTORY = DATA / "factory.in.ipynb"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def cells(path_or_text) -> list[dict]:
    text = path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    return json.loads(text)["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, request: pytest.FixtureRequest) -> None:
    text = (DATA / f"{case}.in.ipynb").read_text(encoding="utf-8")
    result = transform_notebook(text, filename=f"{case}.ipynb")
    assert result.error is None, result.error
    expected = DATA / f"{case}.out.ipynb"
    if request.config.getoption("--update-fixtures"):
        expected.write_text(result.output, encoding="utf-8")
    assert result.output == expected.read_text(encoding="utf-8")
    again = transform_notebook(result.output, filename=f"{case}.ipynb")  # idempotent
    assert again.output == result.output and not again.changes
    for cell in cells(result.output):
        if cell["cell_type"] == "code" and not source(cell).startswith("%%bash") and "broken" not in source(cell):
            masked, _, _ = _mask(source(cell), placeholder="__m{}__")
            compile(masked, "<cell>", "exec")  # every migrated cell is still valid (masked) Python


@pytest.mark.parametrize("case", CASES)
def test_a_run_that_locates_nothing_writes_the_same_notebook(case: str) -> None:
    """`locate=False` (a run writing files with no changed lines to report) skips the rules' line
    diffs: the same output, TODOs and warnings, and no `changes` or `todos_in_source`."""
    text = (DATA / f"{case}.in.ipynb").read_text(encoding="utf-8")
    located, plain = transform_notebook(text, filename=f"{case}.ipynb"), transform_notebook(text, filename=f"{case}.ipynb", locate=False)
    assert plain.output == located.output and plain.error == located.error
    assert plain.todos == located.todos and plain.warnings == located.warnings and plain.rules == located.rules
    assert not plain.changes and not plain.todos_in_source
    assert located.changes or located.output == text


def test_only_code_cells_change_and_everything_else_is_kept() -> None:
    before = cells(TRAINING)
    after = cells(DATA / "training.out.ipynb")
    assert [c.get("id") for c in after] == [c.get("id") for c in before]
    assert [c["cell_type"] for c in after] == [c["cell_type"] for c in before]
    for old, new in zip(before, after):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
        if old["cell_type"] != "code":
            assert old == new
    by_id = {c["id"]: source(c) for c in after}
    old_by_id = {c["id"]: source(c) for c in before}
    # IPython syntax is restored verbatim; non-Python cell magics and cells that do not parse are untouched.
    assert by_id["c1"] == old_by_id["c1"] == "!pip install -q tensorflow==1.15\n%matplotlib inline"
    assert by_id["c6"].startswith("%%time\nmodel_dir = tempfile.mkdtemp()\n") and "tfm.fit(model" in by_id["c6"]
    assert by_id["c7"] == old_by_id["c7"]  # %%bash
    assert by_id["c8"] == old_by_id["c8"] == "tf.estimator?"
    assert by_id["c9"] == old_by_id["c9"]  # a syntax error
    assert by_id["c10"] == "act = tf.nn.relu\n%time act(1.0)\n"
    # The runtime import a rule added lands in the cell that imports TensorFlow, not in cell 1.
    assert by_id["c2"].endswith("import tensorflow as tf\nimport tfmigrate.runtime as tfm")
    assert "tfmigrate" not in by_id["c1"]
    assert by_id["c4"].startswith("class KerasModel(tf.keras.Model):")
    # Layout: same indent, final newline, non-ASCII kept as it is.
    out = (DATA / "training.out.ipynb").read_text(encoding="utf-8")
    assert out.startswith('{\n "cells": [\n  {\n') and out.endswith("}\n") and "café" in out


def test_findings_are_cell_addressed() -> None:
    result = transform_notebook(TRAINING.read_text(encoding="utf-8"), filename="nb.ipynb")
    (warning,) = result.warnings
    assert (warning.code, warning.cell, warning.line) == ("W001", 10, 1) and "syntax error" in warning.message
    spots = {(c.code, c.cell, c.line, c.end_line) for c in result.changes}
    assert ("TFM301", 5, 1, 7) in spots  # model_fn: all of cell 5
    assert ("TFM101", 3, 4, 4) in spots  # import tensorflow.compat.v1 as tf
    assert ("TFM301", 7, 5, 8) in spots  # the estimator, in the %%time cell
    assert all(c.cell in (3, 5, 7) for c in result.changes)  # no change lands on an untouched cell

    factory = transform_notebook(FACTORY.read_text(encoding="utf-8"), filename="f.ipynb")
    out_cells = cells(factory.output)
    for todo in factory.todos:  # write coordinates: the TODO comment's line in its cell
        line = source(out_cells[todo.cell - 1]).splitlines()[todo.line - 1]
        assert f"TODO(tfmigrate {todo.code})" in line
    in_cells = cells(FACTORY)
    for todo in factory.todos_in_source:  # check coordinates: the statement in the original cell
        assert todo.cell == 4 or source(in_cells[todo.cell - 1]).splitlines()[todo.line - 1].strip()
    assert {(t.code, t.cell, t.line) for t in factory.todos_in_source} >= {("TFM101", 3, 2)}


def test_cli_write_check_diff_out_dir(tmp_path: Path) -> None:
    nb = tmp_path / "nb.ipynb"
    shutil.copy(TRAINING, nb)
    plain = tmp_path / "plain.ipynb"
    plain.write_text(json.dumps({"cells": [{"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None, "source": ["print(1)"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    plain_bytes = plain.read_bytes()

    code, err, _ = invoke("--check", str(tmp_path))  # diagnostics: stdout
    assert code == 1
    assert nb.read_bytes() == TRAINING.read_bytes()
    assert f"{nb}:cell_5:1: TFM301 would change lines 1-7" in err
    assert f"{nb}:cell_3:4: TFM101 would change line 4" in err
    assert f"{nb}:cell_10:1: W001 cell left untouched: syntax error" in err
    assert f"would migrate {nb}" in err and "plain.ipynb" not in err

    code, out, _ = invoke("--diff", str(nb))
    assert code == 1 and nb.read_bytes() == TRAINING.read_bytes()
    assert f"--- a/{nb}:cell_5\n+++ b/{nb}:cell_5\n" in out
    assert "+class KerasModel(tf.keras.Model):" in out and "cell_1" not in out and "cell_10" not in out

    out_dir = tmp_path.parent / f"{tmp_path.name}-out"
    code, _, _ = invoke("--out-dir", str(out_dir), str(tmp_path))
    assert code == 1
    assert nb.read_bytes() == TRAINING.read_bytes()
    assert (out_dir / "nb.ipynb").read_text(encoding="utf-8") == (DATA / "training.out.ipynb").read_text(encoding="utf-8")
    assert (out_dir / "plain.ipynb").read_bytes() == plain_bytes

    report = tmp_path.parent / f"{tmp_path.name}-report.json"
    code, out, _ = invoke("--report", str(report), str(tmp_path))
    assert code == 1 and f"migrated {nb}" in out
    assert nb.read_text(encoding="utf-8") == (DATA / "training.out.ipynb").read_text(encoding="utf-8")
    assert plain.read_bytes() == plain_bytes  # no TensorFlow: not even re-serialised
    entry = next(f for f in json.loads(report.read_text())["files"] if f["path"] == str(nb))
    assert entry["kind"] == "notebook" and entry["warnings"][0]["cell"] == 10
    assert all("cell" in c for c in entry["changes"])


def test_todo_lines_in_the_report_are_cell_addressed(tmp_path: Path) -> None:
    nb = tmp_path / "factory.ipynb"
    shutil.copy(FACTORY, nb)
    report = tmp_path / "r.json"
    code, err, _ = invoke("--report", str(report), str(nb))  # diagnostics: stdout
    assert code == 1
    assert f"{nb}:cell_3:2: TFM101 TODO: tf.contrib does not exist in TF2" in err
    (entry,) = json.loads(report.read_text())["files"]
    written = cells(nb)
    assert entry["todos"] and {t["cell"] for t in entry["todos"]} == {3}
    for todo in entry["todos"]:
        assert f"TODO(tfmigrate {todo['code']})" in source(written[todo["cell"] - 1]).splitlines()[todo["line"] - 1]
    assert (nb.read_text(encoding="utf-8")).startswith('{\n  "cells"')  # indent 2 kept


@pytest.mark.parametrize(
    "cell, masked_lines",
    [
        ("x = 1\n!pip install foo\n", ["x = 1", "M0"]),
        ("files = !ls\nprint(files)\n", ["M0", "print(files)"]),
        ("tf.estimator?\n", ["M0"]),
        ("??tf.layers\n", ["M0"]),
        ("if True:\n    %time f()\n    y = 2\n", ["if True:", "    M0", "    y = 2"]),
        ("!pip install \\\n  foo\nimport os\n", ["M0", "M1", "import os"]),
        ("%%time\nx = 1\n", ["M0", "x = 1"]),
        ("x = 1  # what?\n", ["x = 1  # what?"]),
        ("s = '''a\nwhy?\n'''\n", ["s = '''a", "why?", "'''"]),  # parses: nothing to mask
    ],
)
def test_ipython_masking(cell: str, masked_lines: list[str]) -> None:
    masked, magics, parses = _mask(cell, placeholder="M{}")
    assert masked.splitlines() == masked_lines
    for key, line in magics.items():
        assert line in cell.splitlines()
    # Whether the text parsed as it is (its cell magic aside), which spares the caller a second parse.
    assert parses == (not any(not line.lstrip().startswith("%%") for line in magics.values()))
    assert not parses or _syntax_error(masked) is None


def test_non_python_cells_and_notebooks_are_left_alone() -> None:
    assert _mask("%%bash\necho tensorflow\n", placeholder="M{}") is None
    other = {"cells": [{"cell_type": "code", "id": "a", "metadata": {}, "outputs": [], "execution_count": None, "source": "import tensorflow.compat.v1 as tf\n"}], "metadata": {"kernelspec": {"language": "R", "name": "ir"}}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(other)
    result = transform_notebook(text)
    assert result.output == text and result.error is None


def test_bad_notebooks_fail_alone(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text('{"cells": [ "tensorflow" ')
    good = tmp_path / "good.ipynb"
    shutil.copy(FACTORY, good)
    code, _, err = invoke(str(tmp_path))
    assert code == 2
    assert f"{bad}:1: error E005: not a notebook: invalid JSON" in err
    assert bad.read_text() == '{"cells": [ "tensorflow" '
    assert "import tensorflow as tf" in good.read_text()


def _one_cell_per_statement(text: str) -> list[str]:
    import ast

    lines = text.splitlines(keepends=True)
    starts = [0] + [min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1 for n in ast.parse(text).body[1:]]
    return ["".join(lines[a:b]) for a, b in zip(starts, starts[1:] + [len(lines)])]


SPLIT_SAMPLE = [
    FIXTURES_DIR / name
    for name in (
        "TFM101_compat_v1_to_v2/input_pipeline.in.py",
        "TFM201_estimator_to_keras/custom_estimator_classifier.in.py",
        "TFM301_tpu_estimator_to_keras/contrib_tf1x_program.in.py",
        "TFM301_tpu_estimator_to_keras/dropout_zero_rate_adadelta.in.py",
        "TFM301_tpu_estimator_to_keras/eval_metrics_binary_classifier.in.py",
        "TFM301_tpu_estimator_to_keras/returned_estimator_todo.in.py",
        "TFM302_tpu_config_to_runtime/config_module.in.py",
    )
]


@pytest.mark.parametrize("case", SPLIT_SAMPLE, ids=[p.parent.name.split("_")[0] + "/" + p.name for p in SPLIT_SAMPLE])
def test_a_program_split_into_cells_migrates_like_the_file(case: Path) -> None:
    """One cell per top-level statement: the cells, joined, hold the file's migration line for line."""
    pieces = _one_cell_per_statement(case.read_text(encoding="utf-8"))
    nb = {
        "cells": [
            {"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [], "execution_count": None, "source": p.splitlines(keepends=True)}
            for i, p in enumerate(pieces)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    result = transform_notebook(json.dumps(nb, indent=1) + "\n", filename=str(case))
    assert result.error is None and result.changed
    out = json.loads(result.output)["cells"]
    assert [c["id"] for c in out] == [c["id"] for c in nb["cells"]]
    expected = case.with_name(case.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")
    got = "\n".join(source(c) for c in out)
    assert [line for line in got.splitlines() if line.strip()] == [line for line in expected.splitlines() if line.strip()]


def _random_json(rng, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([True, False, None])
    if kind == 1:
        return rng.randint(-10**20, 10**20)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e-300, 1e300, rng.uniform(-1e6, 1e6)])
    if kind in (3, 4, 5):
        return "".join(rng.choice(['a', 'é', '"', '\\', '\n', '\t', '\x00', '\u2028', '💡', '/', ' ']) for _ in range(rng.randrange(6)))
    if kind in (6, 7):
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {str(_random_json(rng, 3)): _random_json(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_notebook_json_is_written_as_the_json_module_writes_it():
    """`dump_notebook`'s own indenting writer gives json.dumps's text byte for byte (random
    values of every JSON type, several indents), and leaves what it does not write the same way
    (a non-string key, NaN) to the json module."""
    import random

    rng = random.Random(7)
    for _ in range(400):
        value = {"cells": [_random_json(rng) for _ in range(3)], "metadata": _random_json(rng)}
        for indent in (1, 2, 4):
            assert _indented(value, indent) == json.dumps(value, indent=indent, ensure_ascii=False)
    assert _indented({"a": {1: 2}}, 1) is None and _indented([float("nan")], 1) is None
    odd = {"cells": [], "n": float("nan")}
    assert dump_notebook(odd, like='{\n "cells": []\n}\n') == json.dumps(odd, indent=1, ensure_ascii=False) + "\n"
