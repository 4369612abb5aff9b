"""TF_CONFIG parsing, make_strategy's new kinds and their errors, and what "auto" picks."""

from __future__ import annotations

import json
import logging

import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import cluster, strategy as strategy_module

pytestmark = pytest.mark.tf

CLUSTER = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"], "ps": ["127.0.0.1:4"]}


def tf_config(cluster_spec=CLUSTER, task_type="worker", index=0, **extra) -> str:
    return json.dumps({"cluster": cluster_spec, "task": {"type": task_type, "index": index}, **extra})


# -- parse_tf_config -----------------------------------------------------------------------------


def test_parse_a_valid_tf_config():
    config = tfm.parse_tf_config(tf_config(index=1))
    assert config.task_type == "worker" and config.task_index == 1 and config.rpc_layer == "grpc"
    assert config.cluster["worker"] == ("127.0.0.1:2", "127.0.0.1:3")
    assert config.has_ps and config.num_workers == 3 and not config.is_chief
    assert tfm.parse_tf_config(tf_config(task_type="chief")).is_chief
    assert tfm.parse_tf_config(tf_config({"worker": ["a:1", "b:2"]}, index=0)).is_chief  # No chief: worker 0.
    resolver = config.cluster_resolver()
    assert resolver.task_type == "worker" and resolver.task_id == 1
    assert resolver.cluster_spec().as_dict()["ps"] == ["127.0.0.1:4"]


def test_sparse_jobs_and_a_dict_are_accepted():
    sparse = {"cluster": {"worker": {"1": "b:2", "0": "a:1"}}, "task": {"type": "worker", "index": 1}}
    config = tfm.parse_tf_config(sparse)
    assert config.cluster["worker"] == ("a:1", "b:2")


@pytest.mark.parametrize("value", [None, "", "  ", "{}", {}])
def test_no_cluster(value):
    assert tfm.parse_tf_config(value) is None


@pytest.mark.parametrize(
    "value, problem",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"task": {"type": "worker", "index": 0}}), 'has no "cluster"'),
        (json.dumps({"cluster": {"worker": ["a:1"]}}), 'has no "task"'),
        (tf_config(index=2), "task index 2 is out of range: job \"worker\" has 2 task"),
        (tf_config(index=-1), "task index -1 is out of range"),
        (tf_config(index="0"), 'task "index" must be an integer'),
        (tf_config(task_type="ps", index=1), "task index 1 is out of range"),
        (tf_config(task_type="master"), "TF1's \"master\" is TF2's \"chief\""),
        (tf_config({"master": ["a:1"]}, task_type="master"), 'cluster job "master" is not one of'),
        (tf_config({"worker": "a:1"}), 'must be a list of "host:port" addresses'),
        (tf_config({"worker": []}), 'cluster job "worker" has no tasks'),
        (tf_config({"worker": ["nohost"]}), "not \"host:port\""),
        (tf_config({"chief": ["a:1", "b:2"]}, task_type="chief"), 'has 2 "chief" tasks'),
    ],
)
def test_malformed_tf_config_names_the_setting_and_value(value, problem):
    with pytest.raises(ValueError) as info:
        tfm.parse_tf_config(value)
    message = str(info.value)
    assert message.startswith("TF_CONFIG ") and problem in message and f"TF_CONFIG={value!r}" in message


def test_single_process_strategies_are_chief_and_write_to_model_dir(tmp_path):
    for strategy in (tf.distribute.get_strategy(), tf.distribute.OneDeviceStrategy("/cpu:0")):
        assert cluster.is_chief(strategy) and not cluster.is_multi_worker(strategy)
        assert cluster.checkpoint_dir(tmp_path, strategy) == (str(tmp_path), False)


# -- make_strategy -------------------------------------------------------------------------------


def test_central_storage_on_two_cpus(two_cpus):
    strategy = tfm.make_strategy("central_storage", devices=two_cpus, parameter_device=two_cpus[0])
    assert isinstance(strategy, tf.distribute.experimental.CentralStorageStrategy)
    assert strategy.num_replicas_in_sync == 2


@pytest.mark.parametrize(
    "kind, options, argument",
    [
        ("one_device", {"devices": ["/gpu:7"]}, "devices"),
        ("mirrored", {"devices": ["/cpu:0", "/cpu:9"]}, "devices"),
        ("central_storage", {"devices": ["/cpu:0"], "parameter_device": "/cpu:5"}, "parameter_device"),
        ("central_storage", {"devices": ["/tpu:0"]}, "devices"),
    ],
)
def test_devices_that_do_not_exist_are_refused(kind, options, argument):
    message = rf"make_strategy\(kind='{kind}'\): device '.*' \(in `{argument}`\) does not exist"
    with pytest.raises(ValueError, match=message):
        tfm.make_strategy(kind, **options)


def test_one_device_takes_one_device(two_cpus):
    with pytest.raises(ValueError, match="takes one device"):
        tfm.make_strategy("one_device", devices=two_cpus)


@pytest.mark.parametrize(
    "kind, options",
    [
        ("default", {"devices": ["/cpu:0"]}),
        ("mirrored", {"variable_partitioner": object()}),
        ("multi_worker_mirrored", {"cross_device_ops": object()}),
        ("parameter_server", {"communication_options": object()}),
        ("central_storage", {"tpu": "my-tpu"}),
    ],
)
def test_an_option_the_kind_does_not_take_is_refused(kind, options):
    (name,) = options
    with pytest.raises(ValueError, match=rf"make_strategy\(kind='{kind}'\) does not use `{name}`"):
        tfm.make_strategy(kind, **options)


def test_all_kinds_are_listed():
    assert tfm.STRATEGY_KINDS == (
        "auto",
        "default",
        "one_device",
        "mirrored",
        "tpu",
        "central_storage",
        "multi_worker_mirrored",
        "parameter_server",
    )


def test_malformed_tf_config_is_refused_not_ignored(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", "{oops")
    for kind in ("auto", "multi_worker_mirrored", "parameter_server"):
        with pytest.raises(ValueError, match=r"TF_CONFIG is not valid JSON.*TF_CONFIG='\{oops'"):
            tfm.make_strategy(kind, use_tpu=False) if kind == "auto" else tfm.make_strategy(kind)
    monkeypatch.setenv("TF_CONFIG", tf_config({"worker": ["a:1", "b:2"]}, index=5))
    with pytest.raises(ValueError, match="task index 5 is out of range"):
        tfm.make_strategy("auto", use_tpu=False)


def test_parameter_server_needs_a_ps_cluster_and_the_chief(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="needs a cluster.*TF_CONFIG is unset"):
        tfm.make_strategy("parameter_server")
    monkeypatch.setenv("TF_CONFIG", tf_config({"chief": ["a:1"], "worker": ["b:2"]}, task_type="chief"))
    with pytest.raises(ValueError, match=r"cluster \(TF_CONFIG\) has no 'ps' tasks"):
        tfm.make_strategy("parameter_server")
    monkeypatch.setenv("TF_CONFIG", tf_config(task_type="worker", index=1))
    with pytest.raises(ValueError, match=r"this task is 'worker'.*only the \"chief\" task.*tf.distribute.Server"):
        tfm.make_strategy("parameter_server")


def test_multi_worker_mirrored_refuses_a_ps_cluster(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", tf_config())
    with pytest.raises(ValueError, match="has \"ps\" tasks.*kind='parameter_server'"):
        tfm.make_strategy("multi_worker_mirrored")


def test_cluster_coordinator_needs_a_parameter_server_strategy():
    with pytest.raises(ValueError, match="must be a ParameterServerStrategy, got _DefaultDistributionStrategy"):
        tfm.cluster_coordinator(tf.distribute.get_strategy())


@pytest.mark.parametrize(
    "tf_config_value, chosen",
    [
        (tf_config(task_type="chief"), "parameter_server"),
        (tf_config({"worker": ["a:1", "b:2"]}, index=1), "multi_worker_mirrored"),
        (tf_config({"chief": ["a:1"], "worker": ["b:2"]}, task_type="chief"), "multi_worker_mirrored"),
        (tf_config({"worker": ["a:1"]}), "default"),
        (tf_config({"chief": ["a:1"], "evaluator": ["b:2"]}, task_type="evaluator"), "default"),
        (None, "default"),
    ],
)
def test_what_auto_picks_from_tf_config(tf_config_value, chosen, monkeypatch):
    """The decision alone (building would start servers/connect): a user's choice by hand on a CPU host."""
    if tf_config_value is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", tf_config_value)
    request = strategy_module._StrategyRequest(
        kind="auto", cluster_resolver=None, tpu=None, use_tpu=False, devices=None, cross_device_ops=None
    )
    choice, description = strategy_module._auto_choice(request)
    assert choice.kind == chosen, description


def test_auto_reads_a_non_tpu_cluster_resolver(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    resolver = tfm.parse_tf_config(tf_config(task_type="chief")).cluster_resolver()
    request = strategy_module._StrategyRequest(
        kind="auto", cluster_resolver=resolver, tpu=None, use_tpu=False, devices=None, cross_device_ops=None
    )
    choice, description = strategy_module._auto_choice(request)
    assert choice.kind == "parameter_server" and choice.cluster_resolver is resolver
    assert "`cluster_resolver` has \"ps\" tasks" in description


def test_auto_on_a_single_worker_tf_config_warns_about_the_tpu_once(monkeypatch, caplog):
    monkeypatch.setenv("TF_CONFIG", tf_config({"worker": ["a:1"]}))
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        assert tfm.make_strategy("auto") is tf.distribute.get_strategy()
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "no TPU found" in warning and "the default strategy (CPU)" in warning




class _StrategyWith:
    def __init__(self, resolver):
        self.cluster_resolver = resolver


def _resolver(cluster, task_type, task_id):
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id
    )


def test_is_chief_of_a_strategy_with_a_cluster_resolver():
    """`tfm.is_chief` (the one `is_chief`, in cluster.py) reads a non-MWMS strategy's cluster resolver."""
    workers = {"worker": ["a:1", "b:1"]}
    with_chief = {"chief": ["c:1"], "worker": ["a:1", "b:1"]}
    assert tfm.is_chief(tf.distribute.get_strategy())
    assert tfm.is_chief(_StrategyWith(_resolver(workers, "worker", 0)))
    assert not tfm.is_chief(_StrategyWith(_resolver(workers, "worker", 1)))
    assert tfm.is_chief(_StrategyWith(_resolver(with_chief, "chief", 0)))
    assert not tfm.is_chief(_StrategyWith(_resolver(with_chief, "worker", 0)))
    assert not tfm.is_chief(_StrategyWith(_resolver({"ps": ["p:1"], **workers}, "ps", 0)))
