"""`RunConfig(train_distribute=MultiWorkerMirroredStrategy())` on the strategy tier: two worker
processes on 127.0.0.1 train as TF 1.x's Estimator trained a cluster, each worker's input_fn
called with its `input_context` (the program shards its batches by input pipeline), V1 optimizers
scaling each replica's loss and summing the gradients across the workers. The reference is the
same program under a MirroredStrategy of two logical CPUs in one process: its replicas take the
dataset's batches in turn, as the two workers' shards do, so the weights must be the same. (TF
2.15's Estimator ran multi-worker training through its distribute coordinator; the oracle has no
loopback cluster here: the in-process replicas, checked against the oracle in
test_hosted_estimator.py, are the reference.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .workers.processes import local_cluster, tf_config

pytestmark = [pytest.mark.tf, pytest.mark.slow]

PROGRAM = '''
import json, sys
import numpy as np
import tensorflow as tf
import tfmigrate.runtime as tfm

kind, model_dir = sys.argv[1], sys.argv[2]
if kind == "mirrored":
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
else:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
rng = np.random.RandomState(4)
X = rng.randn(48, 3).astype(np.float32)
Y = (X[:, 0] + X[:, 2] > 0).astype(np.float32).reshape(-1, 1)


def input_fn(mode, input_context=None):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(4)
    if input_context is not None and input_context.num_input_pipelines > 1:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset


def model_fn(features, labels, mode):
    hidden = tfm.legacy.layers.dense(features["x"], 4, activation=tf.nn.tanh, name="hidden",
                                       kernel_initializer=tf.compat.v1.constant_initializer(0.2))
    logits = tfm.legacy.layers.dense(hidden, 1, name="logits", kernel_initializer=tf.compat.v1.constant_initializer(-0.3))
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.MomentumOptimizer(0.3, 0.9).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


config = tfm.estimator.RunConfig(train_distribute=strategy, tf_random_seed=2, save_checkpoints_steps=2,
                                 save_summary_steps=2)


class Saves(tf.compat.v1.train.CheckpointSaverListener):
    def __init__(self):
        self.steps = []

    def after_save(self, session, global_step_value):
        self.steps.append(int(global_step_value))


listener = Saves()
estimator = tfm.estimator.Estimator(model_fn, model_dir=model_dir, config=config)
estimator.train(input_fn, steps=4, saving_listeners=[listener])
estimator.train(input_fn, steps=2, saving_listeners=[listener])  # (continues from the chief's checkpoint)
print("SAVES", json.dumps(listener.steps))
if tf.train.latest_checkpoint(model_dir):  # (a worker other than the chief writes none)
    names = [n for n in estimator.get_variable_names() if n.startswith(("hidden", "logits", "global_step"))]
    print("RESULT", json.dumps({n: np.asarray(estimator.get_variable_value(n)).ravel().tolist() for n in names}))
'''


def _env(tf_config_json: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="-1", TFMIGRATE_MODEL_FN_TIER="strategy")
    if tf_config_json:
        env["TF_CONFIG"] = tf_config_json
    return env


def _result(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, stdout[-2000:]
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.parametrize("model_dirs", ["shared", "one_per_worker"])
def test_runconfig_multi_worker_strategy_trains_two_processes_as_mirrored_replicas(tmp_path: Path,
                                                                                   model_dirs: str) -> None:
    """Two `train` calls (the second continues from the chief's checkpoint). Only the chief writes
    (checkpoints, `loss` events, saving listeners); every worker takes the chief's values when a
    call starts, so workers given their own model_dirs (the second one empty) still train as one."""
    program = tmp_path / "program.py"
    program.write_text(PROGRAM, encoding="utf-8")
    reference = subprocess.run([sys.executable, str(program), "mirrored", str(tmp_path / "mirrored")],
                               capture_output=True, text=True, env=_env(), timeout=300)
    assert reference.returncode == 0, reference.stderr[-3000:]
    assert "runs in graph mode" not in reference.stderr
    cluster = local_cluster(worker=2)
    dirs = [tmp_path / "shared"] * 2 if model_dirs == "shared" else [tmp_path / f"worker{i}" for i in range(2)]
    workers = [subprocess.Popen([sys.executable, str(program), "multi_worker", str(dirs[i])],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=_env(tf_config(cluster, "worker", i))) for i in range(2)]
    try:
        outputs = [worker.communicate(timeout=300) for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    expected = _result(reference.stdout)
    assert expected["global_step"] == [6]
    for index, (worker, (stdout, stderr)) in enumerate(zip(workers, outputs)):
        assert worker.returncode == 0, stderr[-3000:]
        assert "runs in graph mode" not in stderr
        if index == 1 and model_dirs != "shared":
            assert not list(dirs[1].glob("model.ckpt-*")) and not list(dirs[1].glob("events.out.tfevents.*"))
            continue
        got = _result(stdout)
        assert sorted(got) == sorted(expected)
        for name, values in expected.items():
            assert got[name] == pytest.approx(values, rel=1e-6, abs=1e-7), name
    # Only the chief (worker 0) wrote: its saving listeners were called, and one events file holds
    # the `loss` summaries (a second writer would have opened its own file).
    saves = [json.loads(next(line for line in out.splitlines() if line.startswith("SAVES "))[6:]) for out, _ in outputs]
    assert saves == [[0, 2, 4, 4, 6], []]
    assert len(list(dirs[0].glob("events.out.tfevents.*"))) == 1
    assert tf_checkpoint_steps(dirs[0]) == [0, 2, 4, 6]


def tf_checkpoint_steps(model_dir: Path) -> list[int]:
    return sorted(int(path.name.split("-")[1].split(".")[0]) for path in model_dir.glob("model.ckpt-*.index"))
