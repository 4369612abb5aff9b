"""TFM105: where a TF 1.x program's `tf.keras` becomes TF 1.x's Keras (`tfm.legacy.keras`), and
where it stays Keras 3. The rewrites themselves are the fixtures in `fixtures/TFM105_tf1_keras/`;
the numbers (TF 1.x's on the oracle) are `tests/test_verify.py`'s Keras programs."""

from __future__ import annotations

import pytest

from tfmigrate.engine import Options, transform_source

SESSION = (
    "import tensorflow as tf\n{imports}\n"
    "x = tf.placeholder(tf.float32, [None, 4])\n"
    "{body}\n"
    "if __name__ == '__main__':\n"
    "    with tf.Session() as sess:\n"
    "        print(sess.run(y, {{x: [[1.0, 2.0, 3.0, 4.0]]}}))\n"
)


def _migrate(source: str, tf1_program: bool = False) -> str:
    result = transform_source(source, filename="program.py", options=Options(tf1_program=tf1_program))
    assert result.error is None, result.error
    return result.output


@pytest.mark.parametrize(("imports", "body", "expected"), [
    ("", "y = tf.keras.layers.Dense(2)(x)", "y = tfm.legacy.keras.layers.Dense(2)(x)"),
    ("from tensorflow.keras import layers as L", "y = L.Dense(2)(x)", "y = tfm.legacy.keras.layers.Dense(2)(x)"),
    ("from tensorflow import keras", "y = keras.layers.Dense(2)(x)", "y = tfm.legacy.keras.layers.Dense(2)(x)"),
    ("import tensorflow.keras.backend as K", "y = K.relu(x)", "y = tfm.legacy.keras.backend.relu(x)"),
    ("from tensorflow.keras.layers import Dense", "y = [Dense][0](2)(x)", "y = [tfm.legacy.keras.layers.Dense][0](2)(x)"),
])
def test_session_code_over_keras_runs_tf1s_keras_in_graph_mode(imports: str, body: str, expected: str) -> None:
    out = _migrate(SESSION.format(imports=imports, body=body))
    assert expected in out and "tf.compat.v1.disable_v2_behavior()" in out
    assert "tensorflow.keras" not in out and "from tensorflow import keras" not in out  # the import is gone


@pytest.mark.parametrize("body", [
    "def tower(inputs, layers=layers):\n    return layers.Dense(4)(inputs)\ny = tower(x)",  # a parameter too
    "layers = None if x is None else layers\ny = layers.Dense(2)(x)",  # assigned too
    "from tensorflow.keras.layers import Dense\nmake = Dense\ny = make(2)(x)",  # a module-level alias of it
    "y = tf.keras.layers.Dense(2)(x)\nz = f'{tf.keras.backend.floatx()}'",  # in an f-string
    "import keras\ny = keras.layers.Dense(2)(x)",  # standalone Keras 3 in the file
    "y = tfm.fit(model, x)",  # the runtime's Keras side
])
def test_keras_kept_where_it_is_not_only_tf1_graph_code(body: str) -> None:
    source = SESSION.format(imports="from tensorflow.keras import layers\nimport tfmigrate.runtime as tfm", body=body)
    assert "legacy.keras" not in _migrate(source)


def test_a_tf2_spelled_program_keeps_keras_3() -> None:
    """`tf.compat.v1.placeholder` code is TF 2.x's (its `tf.keras` was Keras 2's v2 API there)."""
    source = SESSION.format(imports="", body="y = tf.keras.layers.Dense(2)(x)").replace("tf.placeholder", "tf.compat.v1.placeholder")
    source = source.replace("tf.Session", "tf.compat.v1.Session")
    assert "legacy.keras" not in _migrate(source)


def test_a_module_with_no_graph_code_of_its_own_keeps_tf_keras() -> None:
    """A model module (its estimator elsewhere) is not known to run in a TF1 graph."""
    source = "import tensorflow as tf\n\ndef body():\n    return tf.keras.Sequential([tf.keras.layers.Dense(2)])\n"
    assert _migrate(source, tf1_program=True) == source


def test_a_model_fn_the_keras_tier_migrates_keeps_keras_3() -> None:
    source = (
        "import tensorflow as tf\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "    logits = tf.keras.layers.Dense(3)(features['x'])\n"
        "    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)\n"
        "    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())\n"
        "    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n\n"
        "def main(input_fn):\n"
        "    est = tf.estimator.Estimator(model_fn=model_fn, model_dir='model')\n"
        "    est.train(input_fn, steps=3)\n"
    )
    out = _migrate(source)
    assert "tfm.fit(" in out and "tf.keras.layers.Dense(3)" in out and "legacy.keras" not in out


def test_keras_estimator_is_left_to_tfm101s_todo() -> None:
    out = _migrate(SESSION.format(imports="", body="y = tf.keras.layers.Dense(2)(x)\nest = tf.keras.estimator.model_to_estimator(m)"))
    assert "tfm.legacy.keras.layers.Dense" in out and "tf.keras.estimator.model_to_estimator" in out
