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


# A program in two modules: `nets` holds Keras code alone; the trainer's model_fn calls it.
NETS = (
    "import tensorflow as tf\n\n"
    "def build_net(units):\n"
    "    return tf.keras.Sequential([tf.keras.layers.Dense(u, activation=tf.nn.relu) for u in units] + [tf.keras.layers.Dense(3)])\n"
)
HOSTED_TRAINER = (
    "import tensorflow as tf\n"
    "import nets\n\n"
    "def model_fn(features, labels, mode, params):\n"
    "    logits = nets.build_net(params['units'])(features)\n"
    "    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)\n"
    "    if mode == tf.estimator.ModeKeys.TRAIN:\n"
    "        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())\n"
    "        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n"
    "    return tf.estimator.EstimatorSpec(mode, loss=loss)\n\n"
    "def main(input_fn):\n"
    "    est = tf.estimator.Estimator(model_fn=model_fn, model_dir='model', params={'units': [8]})\n"
    "    est.train(input_fn, steps=3)\n"
)
# A module compiling the same model with TF's Keras (Keras code alone too), and one with Keras 3's.
KERAS_TRAINER = "import tensorflow as tf\nfrom nets import build_net\n\nmodel = build_net([4])\nmodel.compile(tf.keras.optimizers.SGD(0.1), 'mse')\n"
KERAS3_TRAINER = KERAS_TRAINER.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport keras\n").replace("tf.keras.", "keras.")


def _run_program(tmp_path, files: dict[str, str], jobs: int = 1, mode: str = "write") -> dict[str, str]:
    """The program's modules written under tmp_path/src, migrated as one run into tmp_path/out."""
    from tfmigrate.runner import run

    src = tmp_path / "src"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text, encoding="utf-8")
    outcomes = run([str(src)], mode=mode, out_dir=str(tmp_path / "out") if mode == "write" else None, jobs=jobs)
    assert all(not outcome.errors for outcome in outcomes), [outcome.errors for outcome in outcomes]
    if mode != "write":
        return {outcome.path.rsplit("/", 1)[1]: outcome.diff for outcome in outcomes}
    return {name: (tmp_path / "out" / name).read_text(encoding="utf-8") for name in files}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_module_of_keras_code_alone_runs_tf1s_keras_where_a_hosted_model_fn_builds_it(tmp_path, jobs: int) -> None:
    out = _run_program(tmp_path, {"nets.py": NETS, "trainer.py": HOSTED_TRAINER}, jobs=jobs)
    assert "tfm.ModelFnModel(model_fn," in out["trainer.py"]  # (the model_fn kept, hosted by a Keras model)
    assert out["nets.py"].count("tfm.legacy.keras.") == 3 and "tf.keras" not in out["nets.py"]
    assert "import tfmigrate.runtime as tfm\n" in out["nets.py"]


def test_tf1s_keras_reaches_the_modules_a_converted_module_imports(tmp_path) -> None:
    """trainer (hosted) -> nets -> blocks: both model modules run in the trainer's graph."""
    blocks = "import tensorflow as tf\n\ndef dense(units):\n    return tf.keras.layers.Dense(units)\n"
    nets = NETS.replace("import tensorflow as tf\n", "import tensorflow as tf\nfrom blocks import dense\n").replace(
        "tf.keras.layers.Dense(3)", "dense(3)")
    out = _run_program(tmp_path, {"blocks.py": blocks, "nets.py": nets, "trainer.py": HOSTED_TRAINER})
    assert "tfm.legacy.keras.layers.Dense(units)" in out["blocks.py"]
    assert "tfm.legacy.keras.Sequential(" in out["nets.py"]


def test_tf1s_keras_reaches_a_keras_module_through_a_factory_with_no_keras_of_its_own(tmp_path) -> None:
    """trainer (hosted) -> factory (picks a builder, no Keras) -> nets."""
    factory = "import nets\n\ndef get_builder(name):\n    return {'dense': nets.build_net}[name]\n"
    trainer = HOSTED_TRAINER.replace("import nets\n", "import factory\n").replace("nets.build_net(", "factory.get_builder('dense')(")
    out = _run_program(tmp_path, {"factory.py": factory, "nets.py": NETS, "trainer.py": trainer})
    assert out["nets.py"].count("tfm.legacy.keras.") == 3 and out["factory.py"] == factory


def test_modules_of_keras_code_alone_that_import_one_another_share_tf1s_keras(tmp_path) -> None:
    """A second Keras module over the model the hosted trainer builds (a subclass, a test of it)."""
    out = _run_program(tmp_path, {"nets.py": NETS, "trainer.py": HOSTED_TRAINER, "compiled.py": KERAS_TRAINER})
    assert "tfm.legacy.keras.optimizers.SGD(0.1)" in out["compiled.py"] and "tfm.legacy.keras.Sequential(" in out["nets.py"]


def test_the_diff_of_a_program_shows_its_keras_module_on_tf1s_keras(tmp_path) -> None:
    diffs = _run_program(tmp_path, {"nets.py": NETS, "trainer.py": HOSTED_TRAINER}, mode="diff")
    assert "+    return tfm.legacy.keras.Sequential(" in diffs["nets.py"]


@pytest.mark.parametrize("files", [
    {"nets.py": NETS},  # nothing of the program builds it in a graph
    {"nets.py": NETS, "eager.py": KERAS3_TRAINER},  # a Keras 3 module uses it
    {"nets.py": NETS, "trainer.py": HOSTED_TRAINER, "eager.py": KERAS3_TRAINER},  # both: one Keras per program
    {"nets.py": NETS, "trainer.py": HOSTED_TRAINER.replace("import nets\n", "")},  # the trainer imports it not
    # a Keras 3 module reaches it through a module with no Keras of its own
    {"nets.py": NETS, "trainer.py": HOSTED_TRAINER.replace("import nets\n", "import factory\n").replace("nets.", "factory."),
     "factory.py": "from nets import build_net\n", "eager.py": KERAS3_TRAINER.replace("from nets", "from factory")},
])
def test_a_module_of_keras_code_alone_keeps_keras_3_unless_only_graph_code_builds_it(tmp_path, files: dict[str, str]) -> None:
    files = {**files, "flags.py": "import tensorflow as tf\nFLAGS = tf.app.flags.FLAGS\n"}  # (a TF 1.x program)
    assert "legacy.keras" not in _run_program(tmp_path, files)["nets.py"]


@pytest.mark.parametrize(("source", "side"), [
    (HOSTED_TRAINER, "graph"),  # a hosted Estimator
    (SESSION.format(imports="", body="y = tf.keras.layers.Dense(2)(x)"), "graph"),  # Session code, TF 1.x's Keras
    ("import tensorflow as tf\nsess = tf.Session()\n", "graph"),
    (HOSTED_TRAINER + "m = tf.keras.Model()\n", "graph"),  # its Keras TF 1.x's too (TFM105)
    (HOSTED_TRAINER.replace("import nets\n", "import nets\nimport keras\n"), "keras3"),  # standalone Keras beside it
    ("import tensorflow as tf\nmodel = tf.keras.Sequential()\n", "keras3"),
    ("import keras\nimport tensorflow as tf\nx = tf.constant(1)\n", "keras3"),  # standalone Keras
    ("import tensorflow as tf\nest = tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=[])\n", "keras3"),  # canned
    ("import tensorflow as tf\nx = tf.constant(1)\n", None),
])
def test_which_keras_a_migrated_module_runs(source: str, side: str | None) -> None:
    from tfmigrate.program_keras import keras_side

    assert keras_side(transform_source(source, options=Options(tf1_program=True))) == side


def test_keras_under_a_compat_v1_import_is_tf1s_keras_on_both_pipelines() -> None:
    """`import tensorflow.compat.v1 as tf`: its `tf.keras` was TF 1.x's Keras (the v1 API), whatever
    TFM101 makes of the import. The LibCST pass read the import as TFM101 left it (`import
    tensorflow as tf`) and wrote `keras_v2` where the text path wrote `keras`; both now resolve
    names through the file's original table."""
    from tfmigrate.engine import reference_transform

    source = (
        "import tensorflow.compat.v1 as tf\n\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "  net = tf.keras.layers.Dense(3)(features['x'])\n"
        "  loss = tf.losses.mean_squared_error(labels, net)\n"
        "  train_op = tf.train.AdamOptimizer().minimize(loss, global_step=tf.train.get_global_step())\n"
        "  return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)\n\n\n"
        "def main(_):\n"
        "  est = tf.estimator.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=4)\n"
        "  est.train(input_fn=lambda params: None, max_steps=2)\n"
        "  return est\n"  # (returned: the estimator stays an estimator, its model_fn TF1 graph code)
    )
    fast, reference = transform_source(source).output, reference_transform(source).output
    assert "import tensorflow as tf\n" in fast
    assert "net = tfm.legacy.keras.layers.Dense(3)(features['x'])" in fast
    assert reference == fast
