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
    assert _where("import tensorflow as tf\ndef f():\n  return tf.compat.v1.Session()\n") is None  # its entry decides


def test_the_switch_goes_before_the_first_statement_that_builds_a_graph_at_import() -> None:
    # (a def whose body holds a session builds nothing at import)
    source = ("import tensorflow as tf\ndef f():\n  return tf.compat.v1.Session()\nimport numpy as np\n"
              "x = tf.compat.v1.placeholder(tf.float32)\n")
    assert _where(source) == ("top", 2)
