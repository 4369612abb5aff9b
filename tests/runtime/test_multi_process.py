"""MultiWorkerMirrored and ParameterServer strategies with real processes on 127.0.0.1.

  * MultiWorkerMirrored: two worker processes with TF_CONFIG train `workers.scenario` under
    make_strategy("auto") and must reach the default strategy's weights, history, evaluation and
    predictions (steps_per_execution 1 and 5); a worker killed (SIGKILL) after a checkpoint is
    written, and the cluster restarted, resumes from model_dir and ends where an uninterrupted run
    ends.
  * ParameterServer: a coordinator (chief) process plus a process serving the ps and worker tasks.
    With one worker the results are the default strategy's; with two workers training converges.

The coordinator does not run inside pytest: connecting to a cluster is process-wide and cannot be
undone (every later test would see /job:chief device names; measured: a MirroredStrategy test
afterwards hangs), so it gets a fresh interpreter. Every process ends itself at a deadline, every
wait is bounded, and every process is SIGKILLed when its test ends.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import tfmigrate.runtime as tfm

from .test_strategy_family import TOLERANCE, assert_matches_reference, reference
from .workers import scenario
from .workers.processes import ProcessGroup, local_cluster, tf_config

pytestmark = [pytest.mark.tf, pytest.mark.slow]

DEADLINE_S = 600  # A process ends itself after this long, whatever happens.
WAIT_S = 480  # Generous: the suite runs tests in parallel (xdist), so a neighbour may load the cores.
RUNS = [[1, "dataset"], [5, "dataset"], [5, "input_fn"]]


def test_multi_worker_mirrored_two_workers_match_the_default_strategy(tmp_path):
    cluster = local_cluster(worker=2)
    spec = {"role": "mwms", "mode": "compare", "kind": "auto", "runs": RUNS}
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        workers = [group.start(f"worker{i}", spec, tf_config=tf_config(cluster, "worker", i)) for i in range(2)]
        group.wait(workers, timeout=WAIT_S)
        results = [worker.result() for worker in workers]
    for index, result in enumerate(results):
        assert result["strategy"] == "CollectiveAllReduceStrategy"  # tf.distribute.MultiWorkerMirroredStrategy.
        assert result["num_replicas_in_sync"] == 2 and result["task"] == ["worker", index]
        assert result["is_chief"] == (index == 0)
        assert result["votes"] == [True, False]  # Checkpoint-time decisions are agreed by all workers.
        for (steps_per_execution, data), key in zip(RUNS, [f"{s}/{d}" for s, d in RUNS]):
            assert_matches_reference(result["runs"][key], reference(steps_per_execution, data))


def latest_step(model_dir) -> int:
    path = tfm.latest_checkpoint(model_dir) if model_dir.exists() else None
    return -1 if path is None else int(path.rsplit("-", 1)[1])


def test_multi_worker_mirrored_killed_worker_resumes_from_the_last_checkpoint(tmp_path):
    model_dir = tmp_path / "model"
    spec = {
        "role": "mwms",
        "mode": "resume",
        "model_dir": str(model_dir),
        "max_steps": scenario.STEPS,
        "save_checkpoints_steps": 2,
    }
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        cluster = local_cluster(worker=2)
        # The workers stop after step 4 (ckpt-4 is saved) until killed: the kill lands mid-training
        # however slowly or quickly the machine runs.
        first = [
            group.start(f"first{i}", {**spec, "hold_at_step": 4}, tf_config=tf_config(cluster, "worker", i))
            for i in range(2)
        ]
        # The `checkpoint` state file is the commit point of a save: wait until it names ckpt-4.
        group.wait_until(lambda: latest_step(model_dir) >= 4, "ckpt-4 was saved", timeout=WAIT_S, watched=first)
        group.kill(first[0])  # The chief, which has just written ckpt-4 to model_dir.
        assert first[0].popen.returncode == -9
        assert not (model_dir / f"ckpt-{scenario.STEPS}.index").exists(), "the kill came after training ended"
        # As a cluster manager would, restart the whole job.
        group.kill(first[1])
        killed_at = latest_step(model_dir)
        assert killed_at == 4

        cluster = local_cluster(worker=2)
        second = [group.start(f"second{i}", spec, tf_config=tf_config(cluster, "worker", i)) for i in range(2)]
        group.wait(second, timeout=WAIT_S)
        results = [worker.result() for worker in second]

    expected = scenario.make_model(tfm.make_strategy("default"), 1)
    tfm.fit(expected, scenario.dataset(), steps=scenario.STEPS)
    uninterrupted = {"weights": scenario.weights(expected)}
    for result in results:
        assert result["started_at"][-1] == killed_at >= 4, "did not resume from the latest checkpoint"
        assert result["global_step"] == scenario.STEPS
        difference = scenario.max_weight_difference(result, uninterrupted)
        assert difference <= TOLERANCE, f"resumed run ends {difference} away from the uninterrupted run"
    assert (model_dir / f"ckpt-{scenario.STEPS}.index").exists()
    assert not list(model_dir.glob("workertemp_*")), "a non-chief worker left its temporary checkpoint dir"


def _parameter_server_run(tmp_path, workers: int, spec: dict) -> dict:
    cluster = local_cluster(chief=1, worker=workers, ps=1)
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        tasks = [["ps", 0]] + [["worker", i] for i in range(workers)]
        ready = tmp_path / "servers.ready"
        servers = group.start("servers", {"role": "servers", "cluster": cluster, "tasks": tasks, "ready": str(ready)})
        group.wait_for_file(ready, timeout=WAIT_S, watched=[servers])
        chief = group.start("chief", {"role": "ps_coordinator", **spec}, tf_config=tf_config(cluster, "chief", 0))
        group.wait([chief], timeout=WAIT_S)
        assert servers.popen.poll() is None, f"the servers died:\n{servers.log_tail()}"
        return chief.result()


def test_parameter_server_one_worker_is_exact(tmp_path):
    result = _parameter_server_run(tmp_path, 1, {"mode": "compare", "kind": "auto", "runs": RUNS})
    assert result["strategy"] == "ParameterServerStrategyV2" and result["task"] == ["chief", 0] and result["is_chief"]
    for (steps_per_execution, data), key in zip(RUNS, [f"{s}/{d}" for s, d in RUNS]):
        assert_matches_reference(result["runs"][key], reference(steps_per_execution, data))


def test_parameter_server_two_workers_converge(tmp_path):
    steps = 40
    spec = {
        "mode": "converge",
        "steps_per_execution": 5,
        "steps": steps,
        "model_dir": str(tmp_path / "model"),
        "save_checkpoints_steps": 20,
    }
    result = _parameter_server_run(tmp_path, 2, spec)
    assert result["strategy"] == "ParameterServerStrategyV2" and result["workers"] == 2
    assert result["global_step"] == result["after"]["global_step"] == steps  # No increment lost.
    assert result["after"]["loss"] < result["before"]["loss"]
    assert np.isfinite(result["history"]["loss"]).all()
    assert os.path.basename(result["latest_checkpoint"]) == f"ckpt-{steps}"
