"""make_strategy: each kind, TPU errors that name the setting, and the 'auto' fallback."""

from __future__ import annotations

import logging

import pytest
import tensorflow as tf

from tfmigrate.runtime import STRATEGY_KINDS, make_strategy

pytestmark = pytest.mark.tf


def test_default_is_the_current_strategy():
    assert make_strategy("default") is tf.distribute.get_strategy()
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0"])
    with mirrored.scope():
        assert make_strategy("default") is mirrored


def test_one_device(two_cpus):
    strategy = make_strategy("one_device", devices=[two_cpus[1]])
    assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
    assert [d.endswith("CPU:1") for d in strategy.extended.worker_devices] == [True]
    assert make_strategy("one_device").extended.worker_devices[0].endswith("CPU:0")


def test_mirrored_on_two_logical_cpus(two_cpus):
    strategy = make_strategy("mirrored", devices=two_cpus, cross_device_ops=tf.distribute.ReductionToOneDevice())
    assert isinstance(strategy, tf.distribute.MirroredStrategy)
    assert strategy.num_replicas_in_sync == 2
    summed = strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
    assert float(summed) == 2.0


def test_tpu_without_a_tpu_raises_naming_the_setting():
    with pytest.raises(ValueError, match=r"kind='tpu'.*tpu=None"):
        make_strategy("tpu")


def test_auto_without_tpu_use_tpu_false_is_the_default_strategy(caplog):
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        strategy = make_strategy("auto", use_tpu=False)
    assert strategy is tf.distribute.get_strategy()
    assert caplog.records == []  # TPU explicitly off: nothing to warn about.


def test_auto_falls_back_with_one_warning_when_no_tpu_is_found(caplog):
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        first = make_strategy("auto", use_tpu=True)
        second = make_strategy("auto")
    assert first is tf.distribute.get_strategy() and second is first  # No GPUs here either.
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "no TPU found" in warnings[0] and "default strategy" in warnings[0]


def test_unknown_kind_lists_the_valid_ones():
    with pytest.raises(ValueError, match="valid kinds are auto, default, one_device, mirrored, tpu"):
        make_strategy("central")
    assert STRATEGY_KINDS == (
        "auto",
        "default",
        "one_device",
        "mirrored",
        "tpu",
        "central_storage",
        "multi_worker_mirrored",
        "parameter_server",
    )


@pytest.mark.parametrize("devices", ["/cpu:0", []])
def test_bad_devices(devices):
    with pytest.raises(ValueError, match="devices"):
        make_strategy("mirrored", devices=devices)


def test_mirrored_requests_share_one_strategy(two_cpus):
    """A second MirroredStrategy over the same devices breaks the next model's all-reduce (tensorflow#62790)."""
    first = make_strategy("mirrored", devices=two_cpus)
    assert make_strategy("mirrored", devices=list(two_cpus)) is first
    ops = tf.distribute.ReductionToOneDevice()
    other = make_strategy("mirrored", devices=two_cpus, cross_device_ops=ops)
    assert other is not first and make_strategy("mirrored", devices=two_cpus, cross_device_ops=ops) is other


def test_strategy_from_config_prefers_train_then_eval_distribute(two_cpus):
    import tfmigrate.runtime as tfm

    mirrored = tfm.make_strategy("mirrored", devices=two_cpus)
    config = tfm.RunConfig(train_distribute=mirrored)
    assert tfm.strategy_from_config(config) is mirrored
    assert tfm.strategy_from_config(config, mode="eval") is mirrored  # Estimator fell back to train_distribute
    evaluating = tfm.make_strategy("one_device", devices=[two_cpus[0]])
    assert tfm.strategy_from_config(tfm.RunConfig(train_distribute=mirrored, eval_distribute=evaluating), mode="eval") is evaluating
    assert tfm.strategy_from_config(tfm.RunConfig(), use_tpu=False) is tf.distribute.get_strategy()
    with pytest.raises(ValueError, match="`mode`"):
        tfm.strategy_from_config(config, mode="infer")


def test_auto_on_the_evaluator_task_is_local(monkeypatch):
    """TF1's evaluator evaluated outside the training cluster: no multi-worker strategy there."""
    import json

    cluster = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "evaluator": ["127.0.0.1:3"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "evaluator", "index": 0}}))
    assert make_strategy("auto", use_tpu=False) is tf.distribute.get_strategy()
