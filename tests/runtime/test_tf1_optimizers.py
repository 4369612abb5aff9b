"""The runtime's TF1-faithful optimizers and schedules against TF 2.15's own (the oracle).

Each case feeds the same 40 gradients (spanning six orders of magnitude) to the TF1 optimizer in a
TF 2.15 graph and to its migrated Keras form on current TF, and compares the weights.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import optimizers, schedules

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

_RNG = np.random.RandomState(5)
GRADS = (_RNG.randn(40, 6) * np.array([1.0, 1e-3, 1e-6, 3.0, 0.1, 0.0])).astype("float32")

# name -> (TF1 constructor source, given `gs` (global step), migrated constructor)
CASES = {
    "momentum_schedule": (
        "tf.train.MomentumOptimizer(tf.train.exponential_decay(0.1, gs, 5, 0.5, staircase=True), 0.9)",
        lambda: optimizers.Momentum(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 5, 0.5, staircase=True), 0.9),
    ),
    "nesterov_schedule": (
        "tf.train.MomentumOptimizer(tf.train.cosine_decay(0.1, gs, 30), 0.8, use_nesterov=True)",
        lambda: optimizers.Momentum(tf.keras.optimizers.schedules.CosineDecay(0.1, 30), 0.8, use_nesterov=True),
    ),
    "rmsprop": ("tf.train.RMSPropOptimizer(0.01)", lambda: optimizers.RMSProp(0.01)),
    "rmsprop_centered_momentum": (
        "tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True)",
        lambda: optimizers.RMSProp(0.01, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True),
    ),
    "adam": ("tf.train.AdamOptimizer(0.05, beta1=0.8)", lambda: optimizers.Adam(0.05, beta_1=0.8)),
    "gd_natural_exp": (
        "tf.train.GradientDescentOptimizer(tf.train.natural_exp_decay(0.5, gs, 4, 0.3, staircase=True))",
        lambda: tf.keras.optimizers.SGD(schedules.NaturalExpDecay(0.5, 4, 0.3, staircase=True)),
    ),
    "gd_polynomial_cycle": (
        "tf.train.GradientDescentOptimizer(tf.train.polynomial_decay(0.5, gs, 7, 0.01, power=2.0, cycle=True))",
        lambda: tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.PolynomialDecay(0.5, 7, 0.01, power=2.0, cycle=True)),
    ),
}


@pytest.fixture(scope="module")
def oracle_weights() -> dict:
    return run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        out = {}
        grads = np.asarray(PAYLOAD["grads"], np.float32)
        for name, source in PAYLOAD["cases"].items():
            with tf.Graph().as_default():
                gs = tf.train.get_or_create_global_step()
                w = tf.Variable(np.ones(grads.shape[1], np.float32))
                g = tf.placeholder(tf.float32, [grads.shape[1]])
                step = eval(source).apply_gradients([(g, w)], global_step=gs)
                with tf.Session() as session:
                    session.run(tf.global_variables_initializer())
                    for row in grads:
                        session.run(step, {g: row})
                    out[name] = session.run(w).tolist()
        print(json.dumps(out))
        """,
        {"grads": GRADS.tolist(), "cases": {name: case[0] for name, case in CASES.items()}},
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf1(name: str, oracle_weights: dict) -> None:
    optimizer = CASES[name][1]()
    w = tf.Variable(np.ones(GRADS.shape[1], np.float32))

    @tf.function
    def step(g):
        optimizer.apply_gradients([(g, w)])

    for row in GRADS:
        step(tf.constant(row))
    want = np.asarray(oracle_weights[name], np.float32)
    moved = np.max(np.abs(want - 1.0))
    assert moved > 1e-3
    # Relative to the weights (the equivalence bar is 1e-5); most cases are bit-identical.
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-6, atol=0)


def test_keras_sgd_is_not_tf1_momentum_under_a_schedule(oracle_weights: dict) -> None:
    """Why `optimizers.Momentum` exists: Keras SGD(momentum) drifts from TF1 once the rate changes."""
    optimizer = tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 5, 0.5, staircase=True), momentum=0.9)
    w = tf.Variable(np.ones(GRADS.shape[1], np.float32))
    for row in GRADS:
        optimizer.apply_gradients([(tf.constant(row), w)])
    want = np.asarray(oracle_weights["momentum_schedule"], np.float32)
    assert np.max(np.abs(w.numpy() - want)) > 1e-2


def test_rmsprop_slots_start_like_tf1() -> None:
    optimizer = optimizers.RMSProp(0.01, centered=True)
    w = tf.Variable(np.ones(3, np.float32))
    optimizer.build([w])
    np.testing.assert_array_equal(optimizer._mean_squares[0].numpy(), np.ones(3))
    np.testing.assert_array_equal(optimizer._moms[0].numpy(), np.zeros(3))
    np.testing.assert_array_equal(optimizer._mean_grads[0].numpy(), np.zeros(3))


# -- sparse gradients (embedding lookups): TF1's sparse kernels -------------------------------

SPARSE_INDICES = [[0, 2, 2], [1, 2, 4], [0, 0, 3], [2, 4, 4]] * 6  # row 5 never touched; duplicates
SPARSE_VALUES = (_RNG.randn(len(SPARSE_INDICES), 3, 2) * 0.5).astype("float32")
SPARSE_CASES = {
    "momentum": ("tf.train.MomentumOptimizer(0.1, 0.9)", lambda: optimizers.Momentum(0.1, 0.9)),
    "nesterov_schedule": (
        "tf.train.MomentumOptimizer(tf.train.exponential_decay(0.1, gs, 5, 0.5), 0.8, use_nesterov=True)",
        lambda: optimizers.Momentum(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 5, 0.5), 0.8, use_nesterov=True),
    ),
    "rmsprop_centered": (
        "tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True)",
        lambda: optimizers.RMSProp(0.01, momentum=0.5, centered=True),
    ),
    "adam": ("tf.train.AdamOptimizer(0.05)", lambda: optimizers.Adam(0.05)),
}


@pytest.fixture(scope="module")
def oracle_sparse() -> dict:
    return run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        out = {}
        for name, source in PAYLOAD["cases"].items():
            with tf.Graph().as_default():
                gs = tf.train.get_or_create_global_step()
                table = tf.Variable(np.ones((6, 2), np.float32))
                values = tf.placeholder(tf.float32, [3, 2]); indices = tf.placeholder(tf.int32, [3])
                grad = tf.IndexedSlices(values, indices, tf.constant([6, 2]))
                step = eval(source).apply_gradients([(grad, table)], global_step=gs)
                with tf.Session() as session:
                    session.run(tf.global_variables_initializer())
                    for v, i in zip(PAYLOAD["values"], PAYLOAD["indices"]):
                        session.run(step, {values: v, indices: i})
                    out[name] = session.run(table).tolist()
        print(json.dumps(out))
        """,
        {"values": SPARSE_VALUES.tolist(), "indices": SPARSE_INDICES, "cases": {n: c[0] for n, c in SPARSE_CASES.items()}},
    )


def _run_sparse(optimizer) -> np.ndarray:
    table = tf.Variable(np.ones((6, 2), np.float32))

    @tf.function
    def step(values, indices):
        optimizer.apply_gradients([(tf.IndexedSlices(values, indices, tf.constant([6, 2])), table)])

    for values, indices in zip(SPARSE_VALUES, SPARSE_INDICES):
        step(tf.constant(values), tf.constant(indices, tf.int32))
    return table.numpy()


@pytest.mark.parametrize("name", sorted(SPARSE_CASES))
def test_sparse_gradients_match_tf1(name: str, oracle_sparse: dict) -> None:
    got = _run_sparse(SPARSE_CASES[name][1]())
    want = np.asarray(oracle_sparse[name], np.float32)
    assert np.all(want[5] == 1.0) and np.max(np.abs(want - 1.0)) > 1e-2
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_keras_momentum_moves_untouched_rows(oracle_sparse: dict) -> None:
    """Why the sparse path exists: Keras densifies, so rows the lookups never touched keep moving."""
    got = _run_sparse(tf.keras.optimizers.SGD(0.1, momentum=0.9))
    want = np.asarray(oracle_sparse["momentum"], np.float32)
    assert np.max(np.abs(got - want)) > 1e-3
