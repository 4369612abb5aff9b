"""The runtime's TF1 metrics against TF 2.15's `tf.compat.v1.metrics` (the oracle), over 3 batches."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import metrics

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

_RNG = np.random.RandomState(9)
LABELS = (_RNG.rand(3, 16, 1) > 0.4).astype("float32")
SCORES = np.clip(LABELS * 0.3 + _RNG.rand(3, 16, 1) * 0.7, 0.0, 1.0).astype("float32")
PREDICTIONS = (SCORES > 0.5).astype("float32")
WEIGHTS = _RNG.choice([0.0, 0.5, 1.0, 2.0], size=(3, 16)).astype("float32")

# name -> (TF1 call given labels l, predictions p, scores s, weights w, or None; runtime metric, update kwargs)
CASES = {
    "accuracy": ("tf.metrics.accuracy(l, p)", lambda: metrics.Accuracy(), "labels predictions"),
    "accuracy_w": ("tf.metrics.accuracy(l, p, weights=w)", lambda: metrics.Accuracy(), "labels predictions weights"),
    "precision": ("tf.metrics.precision(l, p)", lambda: metrics.Precision(), "labels predictions"),
    "recall_w": ("tf.metrics.recall(l, p, weights=w)", lambda: metrics.Recall(), "labels predictions weights"),
    "mse": ("tf.metrics.mean_squared_error(l, s)", lambda: metrics.MeanSquaredError(), "labels scores"),
    "rmse_w": ("tf.metrics.root_mean_squared_error(l, s, weights=w)", lambda: metrics.RootMeanSquaredError(), "labels scores weights"),
    "mae": ("tf.metrics.mean_absolute_error(l, s)", lambda: metrics.MeanAbsoluteError(), "labels scores"),
    "mean_w": ("tf.metrics.mean(s, weights=w)", lambda: metrics.Mean(), "values weights"),
    "auc_roc": ("tf.metrics.auc(l, s)", lambda: metrics.AUC(), "labels scores"),
    "auc_pr": ("tf.metrics.auc(l, s, curve='PR')", lambda: metrics.AUC(curve="PR"), "labels scores"),
    "per_class": ("tf.metrics.mean_per_class_accuracy(l, p, 3)", lambda: metrics.MeanPerClassAccuracy(3), "labels predictions"),
    "per_class_w": ("tf.metrics.mean_per_class_accuracy(l, p, 3, weights=w)", lambda: metrics.MeanPerClassAccuracy(3), "labels predictions weights"),
    "auc_pr_w": ("tf.metrics.auc(l, s, weights=w, curve='PR', num_thresholds=50)", lambda: metrics.AUC(num_thresholds=50, curve="PR"), "labels scores weights"),
    "tp_w": ("tf.metrics.true_positives(l, p, weights=w)", lambda: metrics.TruePositives(), "labels predictions weights"),
    "fp": ("tf.metrics.false_positives(l, p)", lambda: metrics.FalsePositives(), "labels predictions"),
    "tn_w": ("tf.metrics.true_negatives(l, p, weights=w)", lambda: metrics.TrueNegatives(), "labels predictions weights"),
    "fn": ("tf.metrics.false_negatives(l, p)", lambda: metrics.FalseNegatives(), "labels predictions"),
    "relative_w": ("tf.metrics.mean_relative_error(l, s, s + 0.1, weights=w)", lambda: metrics.MeanRelativeError(), "labels scores normalizer weights"),
    "below": ("tf.metrics.percentage_below(s, 0.5)", lambda: metrics.PercentageBelow(0.5), "values"),
    "cosine_w": ("tf.metrics.mean_cosine_distance(l, s, 1, weights=w)", lambda: metrics.MeanCosineDistance(1), "labels scores weights"),
    "iou": ("tf.metrics.mean_iou(tf.cast(l, tf.int32), tf.cast(p, tf.int32), 2)", lambda: metrics.MeanIoU(2), "labels predictions"),
    "iou_w": ("tf.metrics.mean_iou(tf.cast(l, tf.int32), tf.cast(p, tf.int32), 2, weights=w)", lambda: metrics.MeanIoU(2), "labels predictions weights"),
}


@pytest.fixture(scope="module")
def oracle_values() -> dict:
    return run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        out = {}
        arrays = {k: np.asarray(v, np.float32) for k, v in PAYLOAD["arrays"].items()}
        for name, source in PAYLOAD["cases"].items():
            with tf.Graph().as_default():
                l = tf.placeholder(tf.float32, [None, 1]); p = tf.placeholder(tf.float32, [None, 1])
                s = tf.placeholder(tf.float32, [None, 1]); w = tf.placeholder(tf.float32, [None])
                value, update = eval(source)
                with tf.Session() as session:
                    session.run(tf.local_variables_initializer())
                    for i in range(3):
                        session.run(update, {l: arrays["labels"][i], p: arrays["predictions"][i], s: arrays["scores"][i], w: arrays["weights"][i]})
                    out[name] = float(session.run(value))
        print(json.dumps(out))
        """,
        {
            "cases": {name: case[0] for name, case in CASES.items()},
            "arrays": {"labels": LABELS.tolist(), "predictions": PREDICTIONS.tolist(), "scores": SCORES.tolist(), "weights": WEIGHTS.tolist()},
        },
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_metric_matches_tf1(name: str, oracle_values: dict) -> None:
    _, make, spec = CASES[name]
    metric = make()
    arrays = {"labels": LABELS, "predictions": PREDICTIONS, "scores": SCORES, "weights": WEIGHTS, "values": SCORES, "normalizer": SCORES + np.float32(0.1)}
    keys = spec.split()
    update = tf.function(lambda **kw: metric.update_state(**kw))
    for i in range(3):
        kwargs = {}
        for key in keys:
            target = {"scores": "predictions"}.get(key, key)
            if key == "scores" and "values" in keys:
                continue
            kwargs[target] = tf.constant(arrays[key][i])
        if "values" in keys:
            kwargs["values"] = tf.constant(SCORES[i])
        update(**kwargs)
    want = oracle_values[name]
    got = float(metric.result())
    assert 0.0 < want
    assert got == pytest.approx(want, rel=1e-5)


def test_keras_string_accuracy_differs_from_tf1_accuracy() -> None:
    """Why `metrics.Accuracy` exists: TF1's accuracy is an exact-match mean, whatever Keras infers."""
    metric = metrics.Accuracy()
    metric.update_state(labels=tf.constant([1.0, 0.0]), predictions=tf.constant([0.9, 0.0]))
    assert float(metric.result()) == 0.5
