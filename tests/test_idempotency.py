"""Issue #15.7: a second run changes nothing, whatever spelling the first run started from."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from conftest import fixture_id, fixture_pairs
from tfmigrate.engine import Options, transform_source

# Import spellings of the TF1 API, each with the name its code uses.
SPELLINGS = [
    ("import tensorflow as tf", "tf"),
    ("import tensorflow.compat.v1 as tf", "tf"),
    ("from tensorflow.compat import v1 as tf", "tf"),
    ("import tensorflow.compat.v1 as tf1", "tf1"),
    ("import tensorflow as tf\nimport tensorflow.compat.v1 as tf1", "tf1"),
    ("import tensorflow", "tensorflow"),
    ("import tensorflow.compat.v1", "tensorflow.compat.v1"),
]
BODIES = [
    "config = {t}.contrib.tpu.RunConfig(tpu_config={t}.contrib.tpu.TPUConfig(iterations_per_loop=200))\n",
    "config = {t}.estimator.tpu.RunConfig(tpu_config={t}.estimator.tpu.TPUConfig(iterations_per_loop=200))\n",
    "flags = {t}.app.flags\nFLAGS = flags.FLAGS\n{t}.logging.info(FLAGS)\n",
    "x = {t}.layers.dense({t}.placeholder({t}.float32, [None, 3]), 4)\nsess = {t}.Session()\n",
    "opt = {t}.train.AdamOptimizer(0.1)\nstep = {t}.train.get_or_create_global_step()\n",
]
FROM_IMPORTS = [
    "from tensorflow.contrib.tpu import RunConfig, TPUConfig\nconfig = RunConfig(tpu_config=TPUConfig(iterations_per_loop=2))\n",
    "from tensorflow.compat.v1 import estimator\nconfig = estimator.tpu.RunConfig()\n",
    "from tensorflow.compat.v1 import logging\nlogging.info('x')\n",
    "from tensorflow import layers\ny = layers.dense(x, 3)\n",
    "from tensorflow import logging\nlogging.info('x')\n",
    "from tensorflow import gfile\nfound = gfile.Exists('x')\n",
]


def _generated() -> list[str]:
    out = [f"{imp}\n{body.format(t=name)}" for (imp, name), body in itertools.product(SPELLINGS, BODIES)]
    return out + FROM_IMPORTS


def assert_idempotent(source: str, options: Options = Options()) -> None:
    first = transform_source(source, options=options)
    assert first.error is None, first.error
    second = transform_source(first.output, options=options)
    assert second.error is None, second.error
    assert second.output == first.output, f"second run changed:\n{first.output}\n---\n{second.output}"


@pytest.mark.parametrize("source", _generated())
def test_generated_spellings_are_idempotent(source: str) -> None:
    assert_idempotent(source)


@pytest.mark.parametrize("body", BODIES[:2])
def test_tf1_and_compat_v1_spellings_migrate_alike(body: str) -> None:
    plain = transform_source(f"import tensorflow as tf\n{body.format(t='tf')}").output
    compat = transform_source(f"import tensorflow.compat.v1 as tf\n{body.format(t='tf')}").output
    assert plain == compat


@pytest.mark.parametrize("target", ["keras", "ctl"])
@pytest.mark.parametrize("path", fixture_pairs(), ids=fixture_id)
def test_fixture_outputs_are_idempotent(path: Path, target: str) -> None:
    assert_idempotent(path.read_text(), Options(target=target))


def test_a_tf1_programs_tf2_function_keeps_compat_v2_where_tf1_has_another() -> None:
    # `tf.summary.scalar` in a TF 1.x program is TF1's: TF2's, spelled so, would become
    # `tf.compat.v1.summary.scalar(..., step=...)` (which raises) in a second run.
    source = (
        "import tensorflow.compat.v1 as tf\nimport tensorflow.compat.v2 as tf2\n\n\n"
        "def host_call(name, x, step):\n  tf2.summary.scalar(name, x, step=step)\n  return tf.summary.scalar(name, x)\n"
    )
    options = Options(tf1_program=True)
    assert_idempotent(source, options)
    output = transform_source(source, options=options).output
    assert "tf.compat.v2.summary.scalar(name, x, step=step)" in output
    assert "tf.compat.v1.summary.scalar(name, x)" in output
