"""RunConfig's log_step_count_steps / save_summary_steps as callbacks, counted in global steps."""

from __future__ import annotations

import glob

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime.callbacks import StepLogger, SummarySaver

pytestmark = pytest.mark.tf


def model_and_data(steps_per_execution=1):
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", steps_per_execution=steps_per_execution)
    x = np.random.RandomState(0).normal(size=(40, 2)).astype("float32")
    return model, tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(4)


def test_step_logger_fires_on_global_step_multiples_across_fits() -> None:
    model, data = model_and_data()
    logger = StepLogger(every_n_steps=4)
    model.fit(data.take(6), epochs=1, verbose=0, callbacks=[logger])
    model.fit(data.take(6), epochs=1, verbose=0, callbacks=[logger])
    assert [step for step, _ in logger.records] == [4, 8, 12]
    assert all(loss is not None and loss > 0 for _, loss in logger.records)


def test_step_logger_with_steps_per_execution_fires_at_loop_ends() -> None:
    model, data = model_and_data(steps_per_execution=3)
    logger = StepLogger(every_n_steps=2)
    model.fit(data.take(9), epochs=1, verbose=0, callbacks=[logger])
    # Host work happens once per 3-step loop, as under TPUEstimator's iterations_per_loop.
    assert [step for step, _ in logger.records] == [3, 6, 9]


def test_summary_saver_writes_loss_scalars(tmp_path) -> None:
    model, data = model_and_data()
    model.fit(data.take(10), epochs=1, verbose=0, callbacks=[SummarySaver(str(tmp_path), every_n_steps=5)])
    events = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert events
    seen = {}
    for record in tf.data.TFRecordDataset(events):
        event = tf.compat.v1.Event.FromString(record.numpy())
        for value in event.summary.value:
            seen.setdefault(value.tag, []).append(event.step)
    assert seen["loss"] == [5, 10]
    assert seen["global_step/sec"] == [5, 10]


def test_bad_interval_is_rejected() -> None:
    with pytest.raises(ValueError, match="every_n_steps"):
        StepLogger(every_n_steps=0)


def test_fit_writes_summaries_and_logs_as_run_config_says(tmp_path, caplog) -> None:
    import logging

    import tfmigrate.runtime as tfm

    model, data = model_and_data(steps_per_execution=2)
    config = tfm.RunConfig(model_dir=str(tmp_path), save_summary_steps=4, log_step_count_steps=3)
    with caplog.at_level(logging.INFO, logger="tfmigrate.runtime"):
        tfm.fit(model, data.repeat(), steps=8, config=config)
    steps = []
    for path in glob.glob(str(tmp_path / "events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(path):
            event = tf.compat.v1.Event.FromString(record.numpy())
            steps += [event.step for value in event.summary.value if value.tag == "loss"]
    assert sorted(steps) == [4, 8]
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss = ")]
    # Every 3 steps, seen at 2-step loop ends: the loops ending past steps 3 and 6.
    assert [m.rsplit("step = ", 1)[1] for m in logged] == ["4", "6"]
