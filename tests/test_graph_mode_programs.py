"""TFM104's decision (`placement`): which programs get TF1 graph mode, and where."""

from __future__ import annotations

import ast

import pytest

from tfmigrate.names import AliasTable, SourceLines
from tfmigrate.rules.graph_mode_programs import placement

SESSION_MAIN = "\n\nif __name__ == '__main__':\n  with tf.compat.v1.Session() as s:\n    s.run(x)\n"


def _where(source: str):
    tree = ast.parse(source)
    return placement(tree, AliasTable.from_ast(tree, SourceLines(source)))


@pytest.mark.parametrize("uses", [
    "x = tfm.estimator.ModeKeys.TRAIN",  # the hosted tier's names run TF1 graph code
    "est = tfm.estimator.tpu.TPUEstimator(model_fn, config=tfm.RunConfig())",
    "y = tfm.legacy.tf1_layers.dense(x, 3)",
    "est = tfm.estimator.Estimator(model_fn)",
])
def test_hosted_code_beside_sessions_gets_graph_mode(uses: str) -> None:
    source = f"import tensorflow as tf\nimport tfmigrate.runtime as tfm\n{uses}{SESSION_MAIN}"
    assert _where(source) == ("main", 3)
    assert _where(source.replace("import tfmigrate.runtime as tfm\n", "")) == ("main", 2)  # its import comes at the end


@pytest.mark.parametrize("uses", [
    "model = tf.keras.Sequential()",
    "est = tfm.estimator.DNNClassifier(hidden_units=[3])",  # a Keras model inside
    "tfm.fit(model, input_fn, steps=3)",
    "strategy = tfm.make_strategy('auto')",
    "tf.compat.v1.disable_eager_execution()",  # a switch already
])
def test_keras_code_or_a_switch_stays_as_it_is(uses: str) -> None:
    assert _where(f"import tensorflow as tf\nimport tfmigrate.runtime as tfm\n{uses}{SESSION_MAIN}") is None


def test_a_graph_built_at_import_switches_after_the_imports_before_it() -> None:
    source = "import numpy as np\nimport tensorflow as tf\nx = tf.compat.v1.placeholder(tf.float32)\nimport os\n"
    assert _where(source) == ("top", 2)
    assert _where("import tensorflow as tf\ndef f():\n  return tf.compat.v1.Session()\n") == ("library", 0)  # its entry decides


def test_the_switch_goes_before_the_first_statement_that_builds_a_graph_at_import() -> None:
    # (a def whose body holds a session builds nothing at import)
    source = ("import tensorflow as tf\ndef f():\n  return tf.compat.v1.Session()\nimport numpy as np\n"
              "x = tf.compat.v1.placeholder(tf.float32)\n")
    assert _where(source) == ("top", 2)


# A program whose Session code is in a module of its own that its entry imports (a training loop
# helper), the entry building the graph: TF 1.x ran both in graph mode.
TRAINLIB = (
    "import tensorflow as tf\n\n\ndef train(loss, train_op, steps):\n"
    "  with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=steps)]) as sess:\n"
    "    while not sess.should_stop():\n      _, final = sess.run([train_op, loss])\n  return final\n"
)
ENTRY = (
    "import tensorflow as tf\n\nimport {lib}\n\n\ndef main(_):\n"
    "  w = tf.get_variable('w', [3, 1], initializer=tf.ones_initializer())\n"
    "  loss = tf.reduce_mean(tf.square(tf.matmul(tf.ones([4, 3]), w) - 1.0))\n"
    "  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_or_create_global_step())\n"
    "  print({lib}.train(loss, train_op, 5))\n\n\nif __name__ == '__main__':\n  tf.app.run(main)\n"
)


def _program(tmp_path, files: dict[str, str], jobs: int = 1) -> dict[str, str]:
    from tfmigrate.runner import run

    src = tmp_path / "src"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text, encoding="utf-8")
    outcomes = run([str(src)], mode="write", out_dir=str(tmp_path / "out"), jobs=jobs)
    assert all(not outcome.errors for outcome in outcomes), [outcome.errors for outcome in outcomes]
    return {name: (tmp_path / "out" / name).read_text(encoding="utf-8") if (tmp_path / "out" / name).exists() else files[name]
            for name in files}


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_entry_switches_for_the_session_code_of_a_module_it_imports(tmp_path, jobs: int) -> None:
    out = _program(tmp_path, {"trainlib.py": TRAINLIB, "train.py": ENTRY.format(lib="trainlib")}, jobs=jobs)
    assert "  tf.compat.v1.disable_v2_behavior()\n  app.run(main)\n" in out["train.py"]
    assert "disable_v2_behavior" not in out["trainlib.py"]  # (a library: its entry decides)


def test_the_switch_reaches_an_entry_through_a_module_in_between(tmp_path) -> None:
    middle = "import trainlib\n\n\ndef train(loss, train_op, steps):\n  return trainlib.train(loss, train_op, steps)\n"
    out = _program(tmp_path, {"trainlib.py": TRAINLIB, "loops.py": middle, "train.py": ENTRY.format(lib="loops")})
    assert "tf.compat.v1.disable_v2_behavior()" in out["train.py"]


@pytest.mark.parametrize("files", [
    {"train.py": ENTRY.format(lib="other")},  # no module of the program runs a session
    {"trainlib.py": TRAINLIB, "train.py": ENTRY.format(lib="other")},  # the entry does not import it
    # an entry that runs Keras 3 code has no graph mode to turn on
    {"trainlib.py": TRAINLIB, "train.py": ENTRY.format(lib="trainlib").replace("import tensorflow as tf\n", "import tensorflow as tf\nimport keras\n")},
])
def test_no_switch_where_no_imported_module_waits_for_one(tmp_path, files: dict[str, str]) -> None:
    files = {**files, "other.py": "def train(*args):\n  return 0\n"}
    assert "disable_v2_behavior" not in _program(tmp_path, files)["train.py"]
