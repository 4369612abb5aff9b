"""`tfm.legacy.predictor.from_saved_model` (TF 1.x's `tf.contrib.predictor`) over a SavedModel
exported by a TF1 graph, called from an eager program as serving scripts call it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfmigrate.runtime import legacy  # noqa: E402

predictor = legacy.predictor
pytestmark = pytest.mark.tf

WEIGHTS = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)


def _export(directory: Path) -> Path:
    """A SavedModel: `serving_default` (x -> y = x @ W, and its argmax) and an input alternative."""
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        scale = tf.compat.v1.placeholder_with_default(tf.constant(1.0), [], name="scale")
        weights = tf.compat.v1.get_variable("w", initializer=WEIGHTS)
        y = tf.matmul(x, weights) * scale
        build = tf.compat.v1.saved_model.signature_def_utils.predict_signature_def
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            builder = tf.compat.v1.saved_model.Builder(str(directory))
            builder.add_meta_graph_and_variables(session, ["serve"], signature_def_map={
                "serving_default": build({"x": x}, {"y": y, "best": tf.argmax(y, axis=1)}),
                "default_input_alternative:scaled": build({"x": x, "scale": scale}, {"y": y}),
            })
            builder.save()
    return directory


def test_called_with_a_dict_as_tf1_serving_scripts_did(tmp_path: Path) -> None:
    export = _export(tmp_path / "export")
    predict_fn = predictor.from_saved_model(str(export))
    x = np.array([[1.0, 1.0], [0.0, 2.0]], np.float32)
    out = predict_fn({"x": x})
    np.testing.assert_allclose(out["y"], x @ WEIGHTS)
    assert list(out["best"]) == [0, 1] and sorted(predict_fn.fetch_tensors) == ["best", "y"]
    with pytest.raises(ValueError, match="Unrecognized input key: words"):
        predict_fn({"words": x})


def test_other_signatures_and_tensor_names(tmp_path: Path) -> None:
    export = _export(tmp_path / "export")
    x = np.ones([1, 2], np.float32)
    scaled = predictor.from_saved_model(str(export), signature_def_key="scaled", tags="serve")
    np.testing.assert_allclose(scaled({"x": x, "scale": 2.0})["y"], 2.0 * x @ WEIGHTS)
    named = predictor.from_saved_model(str(export), input_names={"in": "x:0"}, output_names={"out": "MatMul:0"})
    np.testing.assert_allclose(named({"in": x})["out"], x @ WEIGHTS)
    with pytest.raises(ValueError, match="Available signatures are"):
        predictor.from_saved_model(str(export), signature_def_key="missing")


def test_the_codemod_spells_exactly_these_names() -> None:
    from tfmigrate import hosted

    assert hosted._CONTRIB_PREDICTOR == frozenset(predictor.__all__) - {"SavedModelPredictor"}  # noqa: SLF001
