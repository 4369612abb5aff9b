"""A process of a multi-process strategy test: a MultiWorkerMirrored worker, a parameter-server
coordinator, or the parameter-server cluster's servers.

Usage: python strategy_worker.py '<JSON spec>'. The spec's "role" picks what to do; results are
written as JSON to spec["out"]. Every role ends by itself after spec["deadline_s"] seconds at most, so
a test that dies cannot leave this process behind.

Roles:
  * "mwms": a worker of a MultiWorkerMirroredStrategy cluster described by TF_CONFIG.
      mode "compare": `scenario.run` for each [steps_per_execution, data] of spec["runs"], under
        make_strategy(spec["kind"]).
      mode "keras_args": `scenario.keras_args_run` for each of spec["steps_per_execution"].
      mode "resume": train to spec["max_steps"] in spec["model_dir"] (restoring whatever is there),
        on data that starts at the restored global step; with spec["hold_at_step"], stop there
        (after that step's checkpoint) until killed.
  * "ps_coordinator": the chief of a parameter-server cluster described by TF_CONFIG.
      mode "compare", "keras_args": as for "mwms".
      mode "converge": evaluate, train spec["steps"] steps with checkpoints in spec["model_dir"],
        evaluate again.
  * "servers": start a `tf.distribute.Server` for each of spec["tasks"] ([job, index]) of
      spec["cluster"], write spec["ready"], and serve until the deadline or until stdin closes.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SPEC = json.loads(sys.argv[1])


def _exit_at_deadline() -> None:
    time.sleep(float(SPEC.get("deadline_s", 120)))
    sys.stderr.write(f"strategy_worker: deadline of {SPEC.get('deadline_s', 120)}s reached, exiting.\n")
    sys.stderr.flush()
    os._exit(3)


threading.Thread(target=_exit_at_deadline, daemon=True).start()

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402


def write(result: dict) -> None:
    path = SPEC["out"]
    with open(path + ".tmp", "w") as handle:
        json.dump(result, handle)
    os.replace(path + ".tmp", path)


def serve() -> None:
    cluster = tf.train.ClusterSpec(SPEC["cluster"])
    # ParameterServerStrategy deadlocks on 2 cores with TF's default inter-op pool size.
    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=16)
    servers = [
        tf.distribute.Server(cluster, job_name=job, task_index=index, protocol="grpc", config=config, start=True)
        for job, index in SPEC["tasks"]
    ]
    with open(SPEC["ready"], "w") as handle:
        handle.write(str(len(servers)))
    sys.stdin.read()  # Until the test closes our stdin (or the deadline thread ends us).
    os._exit(0)


def compare(strategy_kind: str) -> None:
    import scenario

    import tfmigrate.runtime as tfm

    strategy = tfm.make_strategy(strategy_kind)
    runs = {}
    for steps_per_execution, data in SPEC["runs"]:
        runs[f"{steps_per_execution}/{data}"] = scenario.run(strategy, steps_per_execution, data=data)
    config = tfm.cluster.tf_config()
    votes = None
    if tfm.cluster.is_multi_worker(strategy):  # The save_secs agreement: True if any worker votes True.
        on_any_worker = tfm.cluster.on_any_worker
        votes = [on_any_worker(strategy, config.task_index == 1), on_any_worker(strategy, False)]
    write(
        {
            "votes": votes,
            "strategy": type(strategy).__name__,
            "num_replicas_in_sync": strategy.num_replicas_in_sync,
            "task": [config.task_type, config.task_index],
            "is_chief": tfm.cluster.is_chief(strategy),
            "runs": runs,
        }
    )


def keras_args(strategy_kind: str) -> None:
    import scenario

    import tfmigrate.runtime as tfm

    strategy = tfm.make_strategy(strategy_kind)
    runs = {str(k): scenario.keras_args_run(strategy, k) for k in SPEC["steps_per_execution"]}
    write({"strategy": type(strategy).__name__, "is_chief": tfm.cluster.is_chief(strategy), "runs": runs})


def resume() -> None:
    import scenario

    import tfmigrate.runtime as tfm

    strategy = tfm.make_strategy("multi_worker_mirrored")
    model = scenario.make_model(strategy, SPEC.get("steps_per_execution", 1))
    started_at: list[int] = []

    def dataset_fn(context: tf.distribute.InputContext) -> tf.data.Dataset:
        # Called by fit after it restored the model: continue with the batch the global step is at.
        start = int(model.optimizer.iterations.numpy())
        started_at.append(start)
        per_replica = context.get_per_replica_batch_size(scenario.GLOBAL_BATCH)
        data = scenario.dataset(scenario.GLOBAL_BATCH, skip=start).unbatch().batch(per_replica)
        return data.shard(context.num_input_pipelines, context.input_pipeline_id)

    class Hold(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            # The step's checkpoint is saved by now (after the previous step): wait to be killed.
            if int(model.optimizer.iterations.numpy()) == SPEC.get("hold_at_step"):
                time.sleep(float(SPEC["deadline_s"]))

    config = tfm.RunConfig(model_dir=SPEC["model_dir"], save_checkpoints_steps=SPEC["save_checkpoints_steps"])
    tfm.fit(model, dataset_fn, max_steps=SPEC["max_steps"], config=config, callbacks=[Hold()])
    write(
        {
            "started_at": started_at,
            "global_step": int(model.optimizer.iterations.numpy()),
            "weights": scenario.weights(model),
            "task": [strategy.cluster_resolver.task_type, strategy.cluster_resolver.task_id],
        }
    )


def converge() -> None:
    import scenario

    import tfmigrate.runtime as tfm

    strategy = tfm.make_strategy("auto")
    model = scenario.make_model(strategy, SPEC["steps_per_execution"], learning_rate=0.1)
    data = tfm.input_fn_data(scenario.input_fn, batch_size=scenario.GLOBAL_BATCH)
    before = tfm.evaluate(model, scenario.dataset(), steps=scenario.EVAL_STEPS)
    config = tfm.RunConfig(model_dir=SPEC["model_dir"], save_checkpoints_steps=SPEC["save_checkpoints_steps"])
    history = tfm.fit(model, data, steps=SPEC["steps"], config=config)
    after = tfm.evaluate(model, scenario.dataset(), steps=scenario.EVAL_STEPS)
    write(
        {
            "strategy": type(strategy).__name__,
            "workers": int(getattr(strategy, "_num_workers", 0)),
            "before": before,
            "after": after,
            "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
            "global_step": int(model.optimizer.iterations.numpy()),
            "latest_checkpoint": tfm.latest_checkpoint(SPEC["model_dir"]),
        }
    )


def main() -> None:
    role, mode = SPEC["role"], SPEC.get("mode")
    if role == "servers":
        serve()
    elif mode == "compare":
        compare(SPEC.get("kind", "auto"))
    elif mode == "keras_args":
        keras_args(SPEC.get("kind", "auto"))
    elif role == "mwms" and mode == "resume":
        resume()
    elif role == "ps_coordinator" and mode == "converge":
        converge()
    else:
        raise SystemExit(f"unknown role/mode {role!r}/{mode!r}")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # Skip interpreter teardown: TF's gRPC threads can hang it.


if __name__ == "__main__":
    main()
