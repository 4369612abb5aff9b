"""RunConfig / TPUConfig: TF1 defaults, validation messages that name the argument, ignored fields."""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest

from tfmigrate.runtime import InputPipelineConfig, RunConfig, TPUConfig

from .conftest import run_oracle

pytestmark = pytest.mark.tf


def test_tpu_config_defaults_match_tf1():
    config = TPUConfig()
    assert config.iterations_per_loop == 2
    assert config.per_host_input_for_training == InputPipelineConfig.PER_HOST_V1
    assert config.eval_training_input_configuration == InputPipelineConfig.PER_HOST_V1
    assert config.experimental_host_call_every_n_steps == 1
    assert not config.per_replica_input
    assert dict(config.unknown) == {}


@pytest.mark.parametrize(
    "value, expected, per_replica",
    [
        (True, "PER_HOST_V1", False),
        (False, "PER_SHARD_V1", True),
        (2, "PER_HOST_V1", False),
        (3, "PER_HOST_V2", True),
        (4, "BROADCAST", False),
        ("PER_HOST_V2", "PER_HOST_V2", True),
        ("InputPipelineConfig.BROADCAST", "BROADCAST", False),
        (InputPipelineConfig.PER_HOST_V2, "PER_HOST_V2", True),
    ],
)
def test_per_host_input_for_training_forms(value, expected, per_replica):
    config = TPUConfig(per_host_input_for_training=value)
    assert config.per_host_input_for_training == expected
    assert config.per_replica_input is per_replica


def test_per_host_input_for_training_accepts_enum_like_objects():
    class Pipeline:
        name = "per_host_v2"

    assert TPUConfig(per_host_input_for_training=Pipeline()).per_host_input_for_training == "PER_HOST_V2"


@pytest.mark.parametrize("value", ["PER_HOST_V3", 7, None, "SLICED"])
def test_bad_per_host_input_for_training_names_the_argument(value):
    with pytest.raises(ValueError, match="per_host_input_for_training"):
        TPUConfig(per_host_input_for_training=value)


@pytest.mark.parametrize("value", ["60s", "5m", "1h", " 30 s"])
def test_time_based_iterations_per_loop_is_rejected_clearly(value):
    with pytest.raises(ValueError, match=r"`iterations_per_loop`.*time interval.*steps_per_execution"):
        TPUConfig(iterations_per_loop=value)


@pytest.mark.parametrize("value", [0, -3, 1.5, "abc", True, None])
def test_bad_iterations_per_loop_names_the_argument(value):
    with pytest.raises(ValueError, match="iterations_per_loop"):
        TPUConfig(iterations_per_loop=value)


def test_iterations_per_loop_digit_string_is_a_count():
    assert TPUConfig(iterations_per_loop="100").iterations_per_loop == 100


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"num_cores_per_replica": 3}, ValueError, "num_cores_per_replica"),
        ({"num_shards": 0}, ValueError, "num_shards"),
        ({"num_shards": 2.0}, TypeError, "num_shards"),
        ({"initial_infeed_sleep_secs": -1}, ValueError, "initial_infeed_sleep_secs"),
        ({"experimental_host_call_every_n_steps": 0}, ValueError, "experimental_host_call_every_n_steps"),
        ({"eval_training_input_configuration": "PER_HOST_V2"}, ValueError, "eval_training_input_configuration"),
        ({"input_partition_dims": [[1, 2, 2, 1], None]}, ValueError, "input_partition_dims"),
        (
            {"input_partition_dims": [[1, 2], None, None], "per_host_input_for_training": 3, "num_cores_per_replica": 2},
            ValueError,
            "input_partition_dims",
        ),
        ({"input_partition_dims": [[1, 2]], "per_host_input_for_training": 3}, ValueError, "num_cores_per_replica"),
    ],
)
def test_tpu_config_validation_names_the_argument(kwargs, error, name):
    with pytest.raises(error, match=name):
        TPUConfig(**kwargs)


def test_tpu_config_keeps_unknown_keywords_and_reports_them(caplog):
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        config = TPUConfig(experimental_feed_hook="hook", not_a_tf1_arg=3)
    assert dict(config.unknown) == {"experimental_feed_hook": "hook", "not_a_tf1_arg": 3}
    assert "experimental_feed_hook" in caplog.text and "not_a_tf1_arg" in caplog.text
    assert config.replace(iterations_per_loop=7).unknown == config.unknown


def test_tpu_config_is_frozen_and_replace_revalidates():
    config = TPUConfig(iterations_per_loop=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.iterations_per_loop = 3  # type: ignore[misc]
    assert config.replace(iterations_per_loop=3).iterations_per_loop == 3
    assert config.iterations_per_loop == 8
    with pytest.raises(ValueError, match="iterations_per_loop"):
        config.replace(iterations_per_loop="10m")


def test_run_config_checkpoint_defaults_follow_tf1():
    assert (RunConfig().save_checkpoints_steps, RunConfig().save_checkpoints_secs) == (None, 600)
    assert (RunConfig(save_checkpoints_steps=7).save_checkpoints_steps, RunConfig(save_checkpoints_steps=7).save_checkpoints_secs) == (7, None)
    assert (RunConfig(save_checkpoints_secs=30).save_checkpoints_steps, RunConfig(save_checkpoints_secs=30).save_checkpoints_secs) == (None, 30)
    both_off = RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (both_off.save_checkpoints_steps, both_off.save_checkpoints_secs) == (None, None)
    with pytest.raises(ValueError, match="save_checkpoints_steps.*save_checkpoints_secs"):
        RunConfig(save_checkpoints_steps=5, save_checkpoints_secs=5)


def test_run_config_matches_tf1_run_config_on_the_oracle():
    cases = [
        {},
        {"save_checkpoints_steps": 7},
        {"save_checkpoints_secs": 30},
        {"save_checkpoints_steps": None, "save_checkpoints_secs": None},
        {"model_dir": "/tmp/x", "keep_checkpoint_max": 2, "tf_random_seed": 3},
    ]
    fields = ["model_dir", "save_checkpoints_steps", "save_checkpoints_secs", "keep_checkpoint_max",
              "keep_checkpoint_every_n_hours", "tf_random_seed", "save_summary_steps", "log_step_count_steps"]
    script = """
        import tensorflow as tf
        out = []
        for kwargs in PAYLOAD["cases"]:
            c = tf.compat.v1.estimator.tpu.RunConfig(**kwargs)
            out.append({f: getattr(c, f) for f in PAYLOAD["fields"]} | {"ipl": c.tpu_config.iterations_per_loop})
        print(json.dumps(out))
    """
    expected = run_oracle(script, {"cases": cases, "fields": fields})
    for kwargs, want in zip(cases, expected):
        # tf.estimator.tpu.RunConfig always has a TPUConfig; give ours the default one.
        ours = RunConfig(tpu_config=TPUConfig(), **kwargs)
        assert {f: getattr(ours, f) for f in fields} | {"ipl": ours.iterations_per_loop} == want, kwargs


def test_iterations_per_loop_property():
    assert RunConfig().iterations_per_loop == 1
    assert RunConfig(tpu_config=TPUConfig()).iterations_per_loop == 2
    assert RunConfig(tpu_config=TPUConfig(iterations_per_loop=50)).iterations_per_loop == 50


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"model_dir": ""}, ValueError, "model_dir"),
        ({"tf_random_seed": "1"}, TypeError, "tf_random_seed"),
        ({"save_checkpoints_steps": -1}, ValueError, "save_checkpoints_steps"),
        ({"save_checkpoints_secs": -1}, ValueError, "save_checkpoints_secs"),
        ({"keep_checkpoint_max": -1}, ValueError, "keep_checkpoint_max"),
        ({"keep_checkpoint_every_n_hours": 0}, ValueError, "keep_checkpoint_every_n_hours"),
        ({"log_step_count_steps": 0}, ValueError, "log_step_count_steps"),
        ({"save_summary_steps": -1}, ValueError, "save_summary_steps"),
        ({"session_creation_timeout_secs": 0}, ValueError, "session_creation_timeout_secs"),
        ({"protocol": "http"}, ValueError, "protocol"),
        ({"master": "grpc://x", "cluster": object()}, ValueError, "master"),
        ({"tpu_config": {"iterations_per_loop": 2}}, TypeError, "tpu_config"),
    ],
)
def test_run_config_validation_names_the_argument(kwargs, error, name):
    with pytest.raises(error, match=name):
        RunConfig(**kwargs)


def test_run_config_model_dir_accepts_paths(tmp_path):
    assert RunConfig(model_dir=tmp_path).model_dir == str(tmp_path)


def test_fields_without_tf2_meaning_are_reported_once(caplog):
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        RunConfig(session_config="proto", device_fn=lambda op: "", session_creation_timeout_secs=10)
        RunConfig(session_config="proto")
    messages = [record.getMessage() for record in caplog.records]
    assert sum("session_config" in m for m in messages) == 1
    assert any("device_fn" in m and "ignored" in m for m in messages)
    assert any("session_creation_timeout_secs" in m for m in messages)


def test_default_run_config_reports_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        RunConfig(model_dir="/tmp/m", save_checkpoints_steps=10, tpu_config=TPUConfig(iterations_per_loop=10))
    assert caplog.records == []


def test_run_config_replace_follows_tf1_rules():
    config = RunConfig(model_dir="/tmp/a", save_checkpoints_steps=5)
    secs = config.replace(save_checkpoints_secs=60)
    assert (secs.save_checkpoints_steps, secs.save_checkpoints_secs) == (None, 60)
    steps = secs.replace(save_checkpoints_steps=9)
    assert (steps.save_checkpoints_steps, steps.save_checkpoints_secs) == (9, None)
    moved = config.replace(model_dir="/tmp/b")
    assert (moved.model_dir, moved.save_checkpoints_steps, config.model_dir) == ("/tmp/b", 5, "/tmp/a")
    with pytest.raises(TypeError, match="not_a_field"):
        config.replace(not_a_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.model_dir = "/tmp/c"  # type: ignore[misc]


_CLUSTER_PROPERTIES = ["is_chief", "task_type", "task_id", "num_ps_replicas", "num_worker_replicas",
                       "global_id_in_cluster", "service"]
_TF_CONFIGS = [
    None,
    {"cluster": {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"], "ps": ["h3:1"]}, "task": {"type": "chief", "index": 0}},
    {"cluster": {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"], "ps": ["h3:1"]}, "task": {"type": "worker", "index": 1}},
    {"cluster": {"chief": ["h0:1"], "worker": ["h1:1"], "ps": ["h3:1", "h4:1"]}, "task": {"type": "ps", "index": 1}},
    {"cluster": {"chief": ["h0:1"], "worker": ["h1:1"]}, "task": {"type": "evaluator", "index": 0}},
    {"cluster": {"master": ["h0:1"], "worker": ["h1:1"]}, "task": {"type": "worker", "index": 0},
     "service": {"name": "x"}},
    {"cluster": {"chief": ["h0:1"]}, "task": {"type": "chief", "index": 0}},
]


def test_run_config_cluster_properties_match_tf1_on_the_oracle(monkeypatch: pytest.MonkeyPatch):
    """TF1 programs read their task off the RunConfig (`config.is_chief`, `num_worker_replicas`):
    ours reads `TF_CONFIG` as TF1's did, for a local task, chief, worker, ps, evaluator and a
    "master" cluster; and the cluster spec and TF1's session master too."""
    script = """
        import tensorflow as tf
        out = []
        for tf_config in PAYLOAD["configs"]:
            os.environ.pop("TF_CONFIG", None)
            if tf_config is not None:
                os.environ["TF_CONFIG"] = json.dumps(tf_config)
            c = tf.compat.v1.estimator.RunConfig()
            out.append({f: getattr(c, f) for f in PAYLOAD["fields"]} | {"cluster_spec": c.cluster_spec.as_dict(), "master": c.master})
        print(json.dumps(out))
    """
    expected = run_oracle(script, {"configs": _TF_CONFIGS, "fields": _CLUSTER_PROPERTIES})
    from tfmigrate.runtime.run_config_cluster import cluster_settings

    for tf_config, want in zip(_TF_CONFIGS, expected):
        if tf_config is None:
            monkeypatch.delenv("TF_CONFIG", raising=False)
        else:
            monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
        ours = RunConfig()
        got = {f: getattr(ours, f) for f in _CLUSTER_PROPERTIES} | {"cluster_spec": ours.cluster_spec.as_dict()}
        got["master"] = cluster_settings().master
        assert got == want, tf_config


def test_run_config_without_a_chief_job_has_tf2s_chief(monkeypatch: pytest.MonkeyPatch):
    """A workers-only cluster (TF2's MultiWorkerMirroredStrategy's; TF1 refused it): worker 0 is chief."""
    cluster = {"worker": ["h0:1", "h1:1"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    assert (RunConfig().is_chief, RunConfig().num_worker_replicas, RunConfig().global_id_in_cluster) == (True, 2, 0)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    assert (RunConfig().is_chief, RunConfig().global_id_in_cluster) == (False, 1)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 5}}))
    with pytest.raises(ValueError, match="task_id"):
        RunConfig().is_chief


def test_configs_deep_copy_as_tpu_estimator_copies_them_for_a_model_fn():
    """TF1's TPUEstimator handed each `model_fn` call `copy.deepcopy(config)`: ours copy, the TF
    objects in them shared, and a TPUConfig's unknown keywords kept (and it pickles)."""
    import copy
    import pickle

    import tensorflow as tf

    strategy = tf.distribute.get_strategy()
    tpu = TPUConfig(iterations_per_loop=3, per_host_input_for_training=3, num_cores_per_replica=2,
                    input_partition_dims=[[1, 2], None],
                    experimental_feed_hook="h")
    config = RunConfig(model_dir="/tmp/m", train_distribute=strategy, tpu_config=tpu)
    copied = copy.deepcopy(config)
    assert copied == config and copied is not config and copied.train_distribute is strategy
    assert copied.tpu_config is not tpu and copied.tpu_config.input_partition_dims is not tpu.input_partition_dims
    assert dict(copied.tpu_config.unknown) == {"experimental_feed_hook": "h"} and copied.iterations_per_loop == 3
    assert copied.is_chief and pickle.loads(pickle.dumps(tpu)) == tpu
    plain = RunConfig(model_dir="/tmp/m")
    assert plain.task_type == "worker" and pickle.loads(pickle.dumps(plain)) == plain  # (its TF_CONFIG reading too)
