"""`tfmigrate.runtime.initializers` against TF1's contrib/slim `variance_scaling_initializer`.

TF 1.15's definition (`tf.contrib.layers.variance_scaling_initializer`, kept verbatim in
`tf_slim.layers.initializers`): fan_in = shape[-2] (shape[-1] for 1-D), fan_out = shape[-1], both
times the receptive field; n = fan_in, fan_out or their mean; uniform(+-sqrt(3 factor / n)) or
truncated_normal(0, sqrt(1.3 factor / n)) cut at two of those stddevs. The oracle's tf_slim draws a
large sample for the same shapes; both samples must have the definition's bounds and spread.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import initializers

from .conftest import run_oracle

pytestmark = [pytest.mark.tf]

# Truncating N(0, s) at +-2s leaves a standard deviation of 0.8796256610342398 s.
_TRUNCATED_STD = 0.8796256610342398

CASES = [
    # (TF1 call, shape, fan used by the definition)
    ("variance_scaling_initializer()", (400, 300), 400.0),
    ("variance_scaling_initializer(factor=1.0, mode='FAN_AVG', uniform=True)", (400, 300), 350.0),
    ("variance_scaling_initializer(factor=3.0, mode='FAN_OUT')", (3, 3, 16, 40), 9 * 40.0),
    ("variance_scaling_initializer(mode='FAN_IN', uniform=True)", (5, 5, 8, 16), 25 * 8.0),
    ("xavier_initializer()", (3, 3, 16, 40), 9 * 28.0),
    ("xavier_initializer(uniform=False)", (600, 200), 400.0),
    ("xavier_initializer_conv2d(uniform=False, seed=4)", (3, 3, 32, 64), 9 * 48.0),
    ("variance_scaling_initializer(factor=2.0)", (5000,), 5000.0),
]


def _factor_uniform(call: str) -> tuple[float, bool]:
    env = {"factor": 2.0, "uniform": False}
    if call.startswith("xavier"):
        env = {"factor": 1.0, "uniform": True}
    for part in call[call.index("(") + 1 : -1].split(","):
        if "=" in part:
            key, value = (s.strip() for s in part.split("="))
            if key in env:
                env[key] = eval(value)
    return env["factor"], env["uniform"]


@pytest.mark.parametrize("call, shape, n", CASES, ids=[c[0] for c in CASES])
def test_fans(call: str, shape, n: float) -> None:
    init = eval(f"initializers.{call}")
    factor, uniform = _factor_uniform(call)
    assert init.scale(shape) == pytest.approx(math.sqrt((3.0 if uniform else 1.3) * factor / n), rel=1e-12)


def _check_sample(sample: np.ndarray, call: str, shape, n: float) -> None:
    factor, uniform = _factor_uniform(call)
    assert sample.shape == tuple(shape) and sample.dtype == np.float32
    sample = sample.ravel()
    if uniform:
        limit = math.sqrt(3.0 * factor / n)
        assert sample.min() >= -limit and sample.max() <= limit
        assert sample.min() < -0.99 * limit and sample.max() > 0.99 * limit
        want_std = limit / math.sqrt(3.0)
    else:
        stddev = math.sqrt(1.3 * factor / n)
        assert np.abs(sample).max() <= 2 * stddev * (1 + 1e-6)
        assert np.abs(sample).max() > 1.95 * stddev
        want_std = _TRUNCATED_STD * stddev
    # Five standard errors of the sample mean and standard deviation.
    assert abs(sample.mean()) < 5 * want_std / math.sqrt(sample.size)
    assert sample.std() == pytest.approx(want_std, rel=5 / math.sqrt(2 * sample.size))


@pytest.mark.parametrize("call, shape, n", CASES, ids=[c[0] for c in CASES])
def test_distribution(call: str, shape, n: float) -> None:
    init = eval(f"initializers.{call}")
    _check_sample(init(shape).numpy(), call, shape, n)


@pytest.mark.oracle
def test_tf1_samples_fit_the_same_definition() -> None:
    samples = run_oracle(
        """
import numpy as np
import tensorflow.compat.v1 as tf
from tf_slim.layers import initializers
tf.disable_eager_execution()
out = []
for call, shape in PAYLOAD:
    with tf.Graph().as_default():
        value = eval("initializers." + call)(shape)
        with tf.Session() as s:
            out.append(s.run(value).ravel().tolist())
print(json.dumps(out))
""",
        [[call, list(shape)] for call, shape, _ in CASES],
        timeout=300,
    )
    for (call, shape, n), sample in zip(CASES, samples):
        _check_sample(np.asarray(sample, np.float32).reshape(shape), call, shape, n)


def test_seeded_initializer_is_deterministic_and_keras_usable() -> None:
    init = initializers.xavier_initializer(uniform=False, seed=7)
    np.testing.assert_array_equal(init((4, 3)).numpy(), initializers.xavier_initializer(uniform=False, seed=7)((4, 3)).numpy())
    layer = tf.keras.layers.Dense(3, kernel_initializer=initializers.variance_scaling_initializer(seed=1))
    layer.build((None, 4))
    assert layer.kernel.shape == (4, 3)
    assert initializers.VarianceScaling.from_config(init.get_config()).get_config() == init.get_config()


def test_rejects_what_tf1_rejected() -> None:
    with pytest.raises(TypeError):
        initializers.variance_scaling_initializer(mode="fan_in")
    with pytest.raises(TypeError):
        initializers.variance_scaling_initializer(dtype=tf.int32)
