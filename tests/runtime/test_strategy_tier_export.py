"""`Estimator.export_saved_model` on the strategy tier: a TF2 SavedModel written with no Session.

The same program exports on both tiers of a model_fn, in processes of their own: the graph-mode
tier writes TF 1.x's SavedModel (`tf.compat.v1.saved_model.Builder`, as TF 2.15's Estimator did),
the strategy tier a TF2 one (`tf.saved_model.save`). They must serve alike: the same serving
signatures (names, method names, input and output keys), the same outputs on the same inputs,
through `tf.saved_model.load` and through TF1's loader (`tfm.legacy.predictor`, a Session). The
strategy tier's export must be TF2's (an object graph in `saved_model.pb`), made with no
`tf.compat.v1.Session` in the process. What it cannot write as TF2 runs in graph mode, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.tf]

PROGRAM = '''
import json, sys
import numpy as np
import tensorflow as tf
import tfmigrate.runtime as tfm

sessions = []
_init = tf.compat.v1.Session.__init__


def counted(self, *args, **kwargs):
    sessions.append(1)
    _init(self, *args, **kwargs)


tf.compat.v1.Session.__init__ = counted
model_dir, export_base, variant = sys.argv[1], sys.argv[2], sys.argv[3]
rng = np.random.RandomState(3)
X = rng.randn(32, 3).astype(np.float32)
Y = (X[:, 0] - X[:, 1] > 0).astype(np.int64)


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(params["batch"])


def model_fn(features, labels, mode, params):
    hidden = tfm.legacy.tf1_layers.dense(features["x"], 5, activation=tf.nn.relu, name="hidden")
    logits = tfm.legacy.tf1_layers.dense(hidden, 2, name="logits")
    probabilities = tf.nn.softmax(logits)
    classes = tf.argmax(logits, axis=1)
    if variant == "table" and mode == tfm.estimator.ModeKeys.PREDICT:
        names = tf.compat.v1.lookup.StaticHashTable(
            tf.compat.v1.lookup.KeyValueTensorInitializer(tf.constant([0, 1], tf.int64), tf.constant(["no", "yes"])),
            default_value="?")
        classes = names.lookup(classes)
    if variant == "vocabulary_file" and mode == tfm.estimator.ModeKeys.PREDICT:
        with open(model_dir + ".vocab", "w") as f:
            f.write("no\\nyes\\n")
        lines = tf.compat.v1.lookup.TextFileIndex
        classes = tf.compat.v1.lookup.StaticHashTable(tf.compat.v1.lookup.TextFileInitializer(
            model_dir + ".vocab", tf.int64, lines.LINE_NUMBER, tf.string, lines.WHOLE_LINE), "?").lookup(classes)
    if mode == tfm.estimator.ModeKeys.PREDICT:
        label_names = tf.tile(tf.constant([["no", "yes"]]), [tf.shape(logits)[0], 1])
        return tfm.estimator.EstimatorSpec(mode, predictions={"probabilities": probabilities, "classes": classes},
                                           export_outputs={
                                               "serving_default": tfm.estimator.export.PredictOutput(
                                                   {"probabilities": probabilities, "logits": logits,
                                                    "classes": classes}),
                                               "classify": tfm.estimator.export.ClassificationOutput(
                                                   scores=probabilities, classes=label_names),
                                           })
    if labels is None:  # (a TRAIN MetaGraph exported from a serving receiver)
        labels = tf.zeros_like(classes)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tfm.estimator.Estimator(model_fn, model_dir=model_dir, params={"batch": 8},
                                    config=tfm.estimator.RunConfig(tf_random_seed=7))
estimator.train(input_fn, steps=5)
before = len(sessions)
parsing = tfm.estimator.export.build_parsing_serving_input_receiver_fn({"x": tf.io.FixedLenFeature([3], tf.float32)})
raw = tfm.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 3], tf.float32)})
paths = [estimator.export_saved_model(f"{export_base}/parsing", parsing).decode(),
         estimator.export_saved_model(f"{export_base}/raw", raw).decode()]
if variant == "all_modes":
    paths.append(estimator.experimental_export_all_saved_models(
        f"{export_base}/all", {tfm.estimator.ModeKeys.PREDICT: raw, tfm.estimator.ModeKeys.TRAIN: raw}).decode())
print("EXPORTS", json.dumps({"paths": paths, "sessions": len(sessions) - before}))
'''

LOADER = '''
import json, sys
import numpy as np
import tensorflow as tf
import tfmigrate.runtime as tfm
from tensorflow.core.protobuf import saved_model_pb2

rows = np.random.RandomState(11).randn(4, 3).astype(np.float32)
examples = np.array([tf.train.Example(features=tf.train.Features(feature={
    "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString() for row in rows])


def plain(value):
    array = np.asarray(value)
    return [s.decode() for s in array.ravel()] if array.dtype == object else array.tolist()


out = {}
for path in sys.argv[1:]:
    proto = saved_model_pb2.SavedModel()
    with open(path + "/saved_model.pb", "rb") as f:
        proto.ParseFromString(f.read())
    meta = next(m for m in proto.meta_graphs if list(m.meta_info_def.tags) == ["serve"])
    signatures = {key: (sig.method_name, sorted(sig.inputs), sorted(sig.outputs))
                  for key, sig in meta.signature_def.items() if not key.startswith("__")}
    loaded = tf.saved_model.load(path, tags=["serve"])
    values = {}
    for key in sorted(signatures):
        inputs = sorted(signatures[key][1])
        fed = {name: tf.constant(examples if name in ("examples", "inputs") else rows) for name in inputs}
        values[key] = {name: plain(v) for name, v in loaded.signatures[key](**fed).items()}
    predictor = tfm.legacy.predictor.from_saved_model(path)
    first = sorted(signatures["serving_default"][1])[0]
    session_out = predictor({first: examples if first == "examples" else rows})
    out[path] = {"tf2": bool(meta.object_graph_def.nodes), "signatures": signatures, "values": values,
                 "predictor": {k: plain(v) for k, v in session_out.items()}}
print("LOADED", json.dumps(out))
'''


def _run(script: Path, *args: str, tier: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TFMIGRATE_MODEL_FN_TIER", "TFMIGRATE_STRATEGY")}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="-1")
    if tier:
        env["TFMIGRATE_MODEL_FN_TIER"] = tier
    run = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    return run


def _line(run: subprocess.CompletedProcess, tag: str) -> dict:
    return json.loads(next(line for line in run.stdout.splitlines() if line.startswith(tag + " "))[len(tag) + 1:])


def _export(tmp_path: Path, tier: str, variant: str = "plain") -> tuple[dict, str]:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM, encoding="utf-8")
    run = _run(program, str(tmp_path / f"model-{tier}"), str(tmp_path / f"exports-{tier}"), variant, tier=tier)
    return _line(run, "EXPORTS"), run.stderr


def _load(tmp_path: Path, paths: list[str]) -> dict:
    loader = tmp_path / "loader.py"
    loader.write_text(LOADER, encoding="utf-8")
    return _line(_run(loader, *paths), "LOADED")


@pytest.mark.parametrize("variant", ["plain", "table"])
def test_the_strategy_tier_exports_a_tf2_saved_model_that_serves_as_the_tf1_one(tmp_path: Path, variant: str) -> None:
    """`table`: the served classes are a TF1 lookup table's strings (the SavedModel carries the
    table and initializes it when it loads)."""
    graph, _ = _export(tmp_path, "graph", variant)
    strategy, log = _export(tmp_path, "strategy", variant)
    assert "runs in graph mode" not in log
    assert strategy["sessions"] == 0  # (the graph tier restores the checkpoint in a Session)
    loaded = _load(tmp_path, graph["paths"] + strategy["paths"])
    for tf1_path, tf2_path in zip(graph["paths"], strategy["paths"]):
        tf1, tf2 = loaded[tf1_path], loaded[tf2_path]
        assert (tf1["tf2"], tf2["tf2"]) == (False, True)
        assert tf2["signatures"] == tf1["signatures"]
        for key, outputs in tf1["values"].items():
            for name, values in outputs.items():
                if isinstance(values[0], str):
                    assert tf2["values"][key][name] == values, (key, name)
                else:
                    np.testing.assert_allclose(tf2["values"][key][name], values, rtol=1e-6, err_msg=f"{key}/{name}")
        for name, values in tf1["predictor"].items():
            if isinstance(values[0], str):
                assert tf2["predictor"][name] == values, name
            else:
                np.testing.assert_allclose(tf2["predictor"][name], values, rtol=1e-6, err_msg=name)
        if variant == "table":
            assert set(tf2["values"]["serving_default"]["classes"]) <= {"no", "yes"}
    # The parsing receiver (one string tensor) gets TF1's classify signature; the raw one does not.
    assert set(loaded[strategy["paths"][0]]["signatures"]) == {"serving_default", "classify"}
    assert loaded[strategy["paths"][0]]["signatures"]["classify"][0] == "tensorflow/serving/classify"


@pytest.mark.parametrize(("variant", "reason"), [
    ("vocabulary_file", "the serving graph has asset files"),
    ("all_modes", "a TRAIN or EVAL MetaGraph"),
])
def test_what_a_tf2_export_cannot_hold_exports_in_graph_mode_saying_why(tmp_path: Path, variant: str,
                                                                       reason: str) -> None:
    exported, log = _export(tmp_path, "strategy", variant)
    assert f"Export runs in graph mode: {reason}" in log
    loaded = _load(tmp_path, exported["paths"][-1:])
    assert not next(iter(loaded.values()))["tf2"]  # TF 1.x's SavedModel, as the graph tier writes it
