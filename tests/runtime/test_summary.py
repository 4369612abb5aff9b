"""Summaries a migrated model_fn writes from its training step: cadence, steps and format.

TF1 Estimator wrote a model_fn's `tf.summary.*` every `save_summary_steps` global steps and a TPU
`host_call` every step, both to `model_dir`; `tfm.fit` gives the migrated model's own summary
calls a default writer with that cadence and `optimizer.iterations` as the step.
"""

from __future__ import annotations

import glob
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm

pytestmark = [pytest.mark.tf]


class SummarizingModel(keras.Model):
    """What the codemod writes for `tf.summary.scalar(...)` in a model_fn and a host_call."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, features, training=False):
        return self.dense(features)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss = tf.reduce_mean(tf.square(y - y_pred))
        if training:
            tfm.summary.scalar(name="mse", data=loss)
            tfm.summary.histogram(name="predictions", data=y_pred)
            with tf.summary.record_if(True):
                tfm.summary.scalar(name="every_step", data=loss, step=self.optimizer.iterations)
        return loss


def _events(model_dir: Path) -> dict[str, list[int]]:
    steps: dict[str, list[int]] = {}
    for path in sorted(glob.glob(str(model_dir / "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(int(event.step))
    return {tag: sorted(s) for tag, s in steps.items()}


@pytest.mark.parametrize("steps_per_execution", [1, 4])
def test_model_summaries_follow_save_summary_steps(tmp_path: Path, steps_per_execution: int) -> None:
    data = tf.data.Dataset.from_tensor_slices((np.ones((64, 2), np.float32), np.zeros((64, 1), np.float32))).batch(4)
    model = SummarizingModel()
    model.compile(optimizer=keras.optimizers.SGD(0.01), steps_per_execution=steps_per_execution)
    config = tfm.RunConfig(model_dir=str(tmp_path), save_summary_steps=3, save_checkpoints_steps=100)
    tfm.fit(model, data, steps=8, config=config)
    tfm.fit(model, data, steps=4, config=config)  # a second fit keeps the global-step cadence
    tfm.evaluate(model, data, steps=2, config=config)  # evaluation writes none of them
    events = _events(tmp_path)
    assert events["mse"] == [0, 3, 6, 9]
    assert events["predictions"] == [0, 3, 6, 9]
    assert events["every_step"] == list(range(12))


def test_summaries_are_tensorboard_readable_without_tensorboard(tmp_path: Path) -> None:
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=7):
        tfm.summary.scalar("s", tf.constant(2.5))
        tfm.summary.histogram("h", tf.constant([1.0, 2.0, 2.0, 4.0]))
        tfm.summary.histogram("same", tf.constant([3.0, 3.0]))
        tfm.summary.image("i", tf.zeros([2, 4, 5, 3]), max_outputs=1)
        tfm.summary.text("t", tf.constant("hello"))
    writer.flush()
    seen = {}
    for path in glob.glob(str(tmp_path / "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                seen[value.tag] = (value.metadata.plugin_data.plugin_name, tf.make_ndarray(value.tensor), event.step)
    assert seen["s"][0] == "scalars" and float(seen["s"][1]) == 2.5 and seen["s"][2] == 7
    plugin, buckets, _ = seen["h"]
    assert plugin == "histograms" and buckets.shape == (30, 3) and buckets[:, 2].sum() == 4
    assert buckets[0, 0] == 1.0 and buckets[-1, 1] == 4.0
    assert seen["same"][1].tolist() == [[2.5, 3.5, 2.0]]
    plugin, image, _ = seen["i"]
    assert plugin == "images" and image[:2].tolist() == [b"5", b"4"] and len(image) == 3
    assert seen["t"][0] == "text" and seen["t"][1] == b"hello"
