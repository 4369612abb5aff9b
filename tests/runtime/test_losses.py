"""tfmigrate.runtime.losses against TF 2.15's tf.compat.v1.losses (the oracle), weights and reductions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import losses
from tfmigrate.runtime.losses import Reduction

from .conftest import run_oracle

pytestmark = pytest.mark.tf

_RNG = np.random.RandomState(42)
B, D, C = 4, 3, 5


def _unit(a, axis):
    return a / np.linalg.norm(a, axis=axis, keepdims=True)


ARRAYS = {
    "reg_labels": _RNG.randn(B, D),
    "reg_preds": _RNG.randn(B, D) * 2,
    "bin_labels": _RNG.randint(0, 2, size=(B, D)).astype("float64"),
    "probs": _RNG.uniform(0.01, 0.99, size=(B, D)),
    "logits_bd": _RNG.randn(B, D) * 3,
    "cos_labels": _unit(_RNG.randn(B, D), 1),
    "cos_preds": _unit(_RNG.randn(B, D), 1),
    "onehot": np.eye(C)[_RNG.randint(0, C, size=B)],
    "logits_bc": _RNG.randn(B, C) * 2,
    "class_ids": _RNG.randint(0, C, size=B),
    "class_ids_col": _RNG.randint(0, C, size=(B, 1)),
    "raw_losses": _RNG.rand(B, D) * 4,
}
WEIGHTS = {
    "none": None,  # The default, 1.0.
    "scalar": 2.5,
    "zero": 0.0,
    "per_example_col": np.array([[0.0], [0.5], [2.0], [1.0]]),  # [B, 1] against [B, D] losses.
    "per_example": np.array([0.0, 0.5, 2.0, 1.0]),  # [B] against [B] losses.
    "per_element": np.array([[0, 1, 2], [0.5, 0, 0], [1, 1, 1], [3, 0, 0.25]], dtype="float64"),
}
REDUCTIONS = [
    Reduction.NONE,
    Reduction.SUM,
    Reduction.MEAN,
    Reduction.SUM_OVER_BATCH_SIZE,
    Reduction.SUM_BY_NONZERO_WEIGHTS,
]

# (function, its array arguments, extra keyword arguments, weight variants that fit its losses' shape)
_ELEMENTWISE = ("none", "scalar", "zero", "per_example_col", "per_element")
SPECS = [
    ("mean_squared_error", {"labels": "reg_labels", "predictions": "reg_preds"}, {}, _ELEMENTWISE),
    ("absolute_difference", {"labels": "reg_labels", "predictions": "reg_preds"}, {}, _ELEMENTWISE),
    ("huber_loss", {"labels": "reg_labels", "predictions": "reg_preds"}, {}, _ELEMENTWISE),
    ("huber_loss", {"labels": "reg_labels", "predictions": "reg_preds"}, {"delta": 0.3}, ("per_example_col",)),
    ("log_loss", {"labels": "bin_labels", "predictions": "probs"}, {}, _ELEMENTWISE),
    ("log_loss", {"labels": "bin_labels", "predictions": "probs"}, {"epsilon": 1e-3}, ("per_element",)),
    ("hinge_loss", {"labels": "bin_labels", "logits": "logits_bd"}, {}, _ELEMENTWISE),
    ("sigmoid_cross_entropy", {"multi_class_labels": "bin_labels", "logits": "logits_bd"}, {}, _ELEMENTWISE),
    (
        "sigmoid_cross_entropy",
        {"multi_class_labels": "bin_labels", "logits": "logits_bd"},
        {"label_smoothing": 0.2},
        ("none", "per_example_col", "per_element"),
    ),
    ("cosine_distance", {"labels": "cos_labels", "predictions": "cos_preds"}, {"axis": 1}, ("none", "per_example_col")),
    ("softmax_cross_entropy", {"onehot_labels": "onehot", "logits": "logits_bc"}, {}, ("none", "scalar", "per_example")),
    (
        "softmax_cross_entropy",
        {"onehot_labels": "onehot", "logits": "logits_bc"},
        {"label_smoothing": 0.1},
        ("none", "per_example"),
    ),
    ("sparse_softmax_cross_entropy", {"labels": "class_ids", "logits": "logits_bc"}, {}, ("none", "zero", "per_example")),
    (
        "sparse_softmax_cross_entropy",
        {"labels": "class_ids_col", "logits": "logits_bc"},
        {},
        ("none", "per_example_col"),
    ),
    ("compute_weighted_loss", {"losses": "raw_losses"}, {}, _ELEMENTWISE),
]


def _cases():
    cases = []
    for (name, arrays, extra, weight_keys), weights, reduction in itertools.product(SPECS, WEIGHTS, REDUCTIONS):
        if weights not in weight_keys:
            continue
        inputs = ",".join(arrays.values())
        case_id = f"{name}({inputs}{''.join(f',{k}={v}' for k, v in extra.items())})-w={weights}-{reduction}"
        cases.append({"id": case_id, "fn": name, "arrays": arrays, "extra": extra, "weights": weights, "reduction": reduction})
    return cases


CASES = _cases()


def _to_float32(value):
    return None if value is None else np.asarray(value, dtype="int32" if np.asarray(value).dtype.kind == "i" else "float32")


def _kwargs(case):
    kwargs = {arg: _to_float32(ARRAYS[key]) for arg, key in case["arrays"].items()}
    kwargs.update(case["extra"])
    if WEIGHTS[case["weights"]] is not None:
        kwargs["weights"] = _to_float32(WEIGHTS[case["weights"]])
    kwargs["reduction"] = case["reduction"]
    return kwargs


_ORACLE_SCRIPT = """
    import numpy as np
    import tensorflow as tf

    results = {}
    for case in PAYLOAD["cases"]:
        kwargs = {}
        for arg, value in case["kwargs"].items():
            if isinstance(value, dict):
                value = np.asarray(value["data"], dtype=value["dtype"])
            kwargs[arg] = value
        out = getattr(tf.compat.v1.losses, case["fn"])(**kwargs)
        results[case["id"]] = np.asarray(out, dtype="float64").tolist()
    print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def oracle_results():
    payload = []
    for case in CASES:
        kwargs = {
            arg: {"data": value.tolist(), "dtype": str(value.dtype)} if isinstance(value, np.ndarray) else value
            for arg, value in _kwargs(case).items()
        }
        payload.append({"id": case["id"], "fn": case["fn"], "kwargs": kwargs})
    return run_oracle(_ORACLE_SCRIPT, {"cases": payload})


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_matches_tf1_losses(case, oracle_results):
    fn = getattr(losses, case["fn"])
    eager = np.asarray(fn(**_kwargs(case)), dtype="float64")
    in_function = np.asarray(tf.function(lambda: fn(**_kwargs(case)))(), dtype="float64")
    expected = np.asarray(oracle_results[case["id"]], dtype="float64")
    np.testing.assert_allclose(eager, expected, rtol=1e-6, atol=0)
    np.testing.assert_allclose(in_function, expected, rtol=1e-6, atol=0)


def test_weighted_reduction_is_tf1s_not_keras():
    """The doc's example: weights [0, .5, 2, 1] -> sum(w*l) / #nonzero, which no Keras reduction gives."""
    per_example = np.array([1.0, 2.0, 3.0, 4.0], "float32")
    weights = np.array([0.0, 0.5, 2.0, 1.0], "float32")
    loss = losses.compute_weighted_loss(per_example, weights)
    assert float(loss) == pytest.approx((0.5 * 2 + 2 * 3 + 4) / 3)
    assert float(losses.compute_weighted_loss(per_example, weights, reduction=Reduction.MEAN)) == pytest.approx(11 / 3.5)
    assert float(losses.compute_weighted_loss(per_example, 0.0)) == 0.0  # 0 / 0 -> 0, not NaN.


def test_argument_errors():
    with pytest.raises(ValueError, match="reduction"):
        losses.mean_squared_error([1.0], [1.0], reduction="mean")
    with pytest.raises(ValueError, match="labels"):
        losses.mean_squared_error(None, [1.0])
    with pytest.raises(ValueError, match="axis"):
        losses.cosine_distance([[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="weights"):
        losses.mean_squared_error(np.ones((4, 3)), np.ones((4, 3)), weights=np.ones(4))  # Rank 1 vs 2, as TF1.
    with pytest.raises(ValueError, match="incompatible"):
        losses.absolute_difference(np.ones((4, 3)), np.ones((4, 2)))
    assert float(losses.cosine_distance([[1.0, 0.0]], [[1.0, 0.0]], dim=1)) == 0.0


def test_reduction_values_are_tf1s():
    assert Reduction.SUM_OVER_NONZERO_WEIGHTS == Reduction.SUM_BY_NONZERO_WEIGHTS == "weighted_sum_by_nonzero_weights"
    assert set(Reduction.all()) == {
        "none", "weighted_sum", "weighted_mean", "weighted_sum_over_batch_size", "weighted_sum_by_nonzero_weights"
    }


def test_gradients_flow_through_weighted_losses():
    predictions = tf.Variable(ARRAYS["reg_preds"].astype("float32"))
    with tf.GradientTape() as tape:
        loss = losses.mean_squared_error(ARRAYS["reg_labels"].astype("float32"), predictions, weights=WEIGHTS["per_example_col"])
    gradient = tape.gradient(loss, predictions).numpy()
    assert np.all(gradient[0] == 0) and np.all(np.abs(gradient[1:]) > 0)


def test_scale_loss_for_replicas(two_cpus):
    assert float(losses.scale_loss_for_replicas(3.0)) == 3.0
    strategy = tfm.make_strategy("mirrored", devices=two_cpus)
    scaled = strategy.run(lambda: losses.scale_loss_for_replicas(tf.constant(3.0)))
    assert [float(v) for v in strategy.experimental_local_results(scaled)] == [1.5, 1.5]
