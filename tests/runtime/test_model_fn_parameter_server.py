"""A kept model_fn under `TFMIGRATE_STRATEGY=parameter_server`: the program is the coordinator
(chief) of a cluster on 127.0.0.1 whose parameter server and workers are `tf.distribute.Server`s
(one process here); training runs on the workers as TF 1.x's parameter-server cluster trained,
evaluation on the coordinator from the checkpoint.

With one worker the steps run one after another, so the numbers must be those of the same program
on the default strategy, exactly (closures of one step, and of `iterations_per_loop` steps). With
two workers they run asynchronously: the global step still counts every step, and checkpoints
hold the steps TF 1.x's `CheckpointSaverHook` saved.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .workers.processes import ProcessGroup, local_cluster, tf_config

pytestmark = [pytest.mark.tf, pytest.mark.slow]

DEADLINE_S = 300

PROGRAM = '''
import json, logging, sys
import numpy as np
import tensorflow as tf
import tfmigrate.runtime as tfm

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
model_dir, loop, how = sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "calls"
rng = np.random.RandomState(4)
X = rng.randn(48, 3).astype(np.float32)
Y = (X[:, 0] + X[:, 2] > 0).astype(np.float32).reshape(-1, 1)


def input_fn(params):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(params["batch_size"])


def model_fn(features, labels, mode, params):
    hidden = tfm.legacy.tf1_layers.dense(features["x"], 4, activation=tf.nn.tanh, name="hidden")
    logits = tfm.legacy.tf1_layers.dense(hidden, 1, name="logits")
    if mode == tfm.estimator.ModeKeys.PREDICT:
        return tfm.estimator.tpu.TPUEstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.cast(logits > 0, tf.float32))
    return tfm.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                              eval_metrics=(lambda: {"accuracy": accuracy}, []))


config = tfm.estimator.tpu.RunConfig(model_dir=model_dir, tf_random_seed=2, save_checkpoints_steps=5,
                                     tpu_config=tfm.estimator.tpu.TPUConfig(iterations_per_loop=loop))
estimator = tfm.estimator.tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=4,
                                           eval_batch_size=4)
if how == "train_and_evaluate":  # TF 1.x's distributed procedure per task; every task's call returns None
    def serving():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        return tfm.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    exporter = tfm.estimator.LatestExporter("latest", serving, exports_to_keep=None)
    assert tfm.estimator.train_and_evaluate(
        estimator, tfm.estimator.TrainSpec(input_fn, max_steps=12),
        tfm.estimator.EvalSpec(input_fn, steps=3, start_delay_secs=0, throttle_secs=0, exporters=[exporter])) is None
else:
    estimator.train(input_fn, steps=12)
result = estimator.evaluate(input_fn, steps=3)
weights = {name: tf.train.load_variable(model_dir, name).ravel().tolist()
           for name in ("hidden/kernel", "logits/bias", "global_step")}
print("RESULT", json.dumps({"eval": {k: float(v) for k, v in result.items()}, "weights": weights}))
'''


def _env(tf_config_json: str | None = None, asked: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "TFMIGRATE_STRATEGY", "TFMIGRATE_MODEL_FN_TIER")}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="-1")
    if tf_config_json:
        env["TF_CONFIG"] = tf_config_json
        if asked:
            env["TFMIGRATE_STRATEGY"] = "parameter_server"
    return env


def _run(program: Path, model_dir: Path, loop: int, tf_config_json: str | None = None,
         asked: bool = True) -> tuple[dict, str]:
    run = subprocess.run([sys.executable, str(program), str(model_dir), str(loop)], capture_output=True, text=True,
                         env=_env(tf_config_json, asked), timeout=DEADLINE_S)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "runs in graph mode" not in run.stderr
    line = next(line for line in run.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):]), run.stderr


def _on_parameter_servers(tmp_path: Path, program: Path, workers: int, loop: int) -> tuple[dict, str]:
    cluster = local_cluster(chief=1, worker=workers, ps=1)
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        ready = tmp_path / "servers.ready"
        tasks = [["ps", 0]] + [["worker", i] for i in range(workers)]
        servers = group.start("servers", {"role": "servers", "cluster": cluster, "tasks": tasks, "ready": str(ready)})
        group.wait_for_file(ready, timeout=120, watched=[servers])
        return _run(program, tmp_path / f"ps-{workers}-{loop}", loop, tf_config(cluster, "chief", 0))


def _program(tmp_path: Path) -> Path:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM, encoding="utf-8")
    return program


def _checkpoint_steps(model_dir: Path) -> list[int]:
    return sorted(int(path.name.split("-")[1].split(".")[0]) for path in model_dir.glob("model.ckpt-*.index"))


@pytest.mark.parametrize("loop", [1, 3], ids=["one-step-closures", "iterations_per_loop-closures"])
def test_one_worker_trains_as_the_default_strategy(tmp_path: Path, loop: int) -> None:
    program = _program(tmp_path)
    expected, _ = _run(program, tmp_path / "default", loop)
    got, log = _on_parameter_servers(tmp_path, program, 1, loop)
    assert f"Training on 1 worker of ParameterServerStrategyV2 (asynchronously), {loop} step(s) per closure." in log
    assert got == expected  # (one worker: the same steps in the same order, bit for bit)
    assert _checkpoint_steps(tmp_path / f"ps-1-{loop}") == [0, 5, 10, 12]


@pytest.mark.parametrize("asked", [True, False], ids=["TFMIGRATE_STRATEGY", "TF_CONFIG-alone"])
def test_two_workers_train_asynchronously_and_count_every_step(tmp_path: Path, asked: bool) -> None:
    """The workers are the program itself, run with their TF_CONFIG as TF 1.x's were: there it
    serves its task's `tf.distribute.Server`, and the chief trains on them. A TF_CONFIG with "ps"
    tasks alone (TF 1.x's parameter-server cluster, no TFMIGRATE_STRATEGY) trains so too."""
    program = _program(tmp_path)
    cluster = local_cluster(chief=1, worker=2, ps=1)
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        ready = tmp_path / "servers.ready"
        servers = group.start("servers", {"role": "servers", "cluster": cluster, "tasks": [["ps", 0]], "ready": str(ready)})
        group.wait_for_file(ready, timeout=120, watched=[servers])
        workers = [subprocess.Popen([sys.executable, str(program), str(tmp_path / f"worker{i}"), "1"],
                                    env=_env(tf_config(cluster, "worker", i), asked), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True) for i in range(2)]
        try:
            got, log = _run(program, tmp_path / "ps-2-1", 1, tf_config(cluster, "chief", 0), asked)
            assert all(worker.poll() is None for worker in workers), "a worker task ended: it should serve"
        finally:
            for worker in workers:
                worker.kill()
        worker_log = workers[0].communicate()[1]
    assert "this is the 'worker' task 0 of a parameter-server cluster" in worker_log
    assert "Training on 2 workers of ParameterServerStrategyV2 (asynchronously)" in log
    assert got["weights"]["global_step"] == [12] and got["eval"]["global_step"] == 12
    assert _checkpoint_steps(tmp_path / "ps-2-1") == [0, 5, 10, 12]
    assert 0 < got["eval"]["loss"] < 0.69  # (trained: below the untrained model's log 2)


def test_train_and_evaluate_runs_each_task_as_tf1s_distributed_procedure(tmp_path: Path) -> None:
    """`train_and_evaluate` with a TF_CONFIG cluster of chief, worker, ps and evaluator (TF 1.x's
    parameter-server job, no TFMIGRATE_STRATEGY): the worker task serves, the chief trains on it
    to max_steps, the evaluator evaluates each new checkpoint and exports it (TF2 SavedModels),
    ending at the last one. One worker: the numbers of the program's local calls."""
    program = _program(tmp_path)
    expected, _ = _run(program, tmp_path / "default", 1)
    cluster = local_cluster(chief=1, worker=1, ps=1)
    model_dir = tmp_path / "cluster"
    argv = [sys.executable, str(program), str(model_dir), "1", "train_and_evaluate"]
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        ready = tmp_path / "servers.ready"
        servers = group.start("servers", {"role": "servers", "cluster": cluster, "tasks": [["ps", 0]], "ready": str(ready)})
        group.wait_for_file(ready, timeout=120, watched=[servers])
        tasks = [subprocess.Popen(argv, env=_env(tf_config(cluster, kind, 0), asked=False), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for kind in ("worker", "evaluator")]
        try:
            chief = subprocess.run(argv, capture_output=True, text=True, timeout=DEADLINE_S,
                                   env=_env(tf_config(cluster, "chief", 0), asked=False))
            evaluator_out, evaluator_log = tasks[1].communicate(timeout=DEADLINE_S)
        finally:
            for task in tasks:
                task.kill()
    assert chief.returncode == 0, chief.stderr[-4000:]
    assert tasks[1].returncode == 0, evaluator_log[-4000:]
    for log in (chief.stderr, evaluator_log):
        assert "runs in graph mode" not in log
    assert "Training on 1 worker of ParameterServerStrategyV2" in chief.stderr
    for stdout in (chief.stdout, evaluator_out):  # (each then evaluates the last checkpoint by itself)
        got = json.loads(next(line for line in stdout.splitlines() if line.startswith("RESULT "))[len("RESULT "):])
        assert got == expected
    exports = sorted((model_dir / "export" / "latest").iterdir())
    assert exports, "the evaluator's exporter wrote nothing"
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString((exports[-1] / "saved_model.pb").read_bytes())
    assert proto.meta_graphs[0].object_graph_def.nodes  # a TF2 SavedModel
