"""`--target ctl` programs under distribution strategies give the oracle's (single-device) numbers.

The migrated custom training loops of representative TPUEstimator programs (`iterations_per_loop`
> 1, checkpoints, eval metrics, predictions, a program that restores its own `model_dir`) run:

  * under MirroredStrategy on two logical CPUs (`mirrored_program.py` answers the program's strategy
    request with it);
  * as a MultiWorkerMirroredStrategy cluster of two processes on 127.0.0.1 (`TF_CONFIG` with two
    workers: the program's own `make_strategy("auto")` picks the strategy), both processes in one
    working directory, so the chief writes `model_dir` and the other worker only temporary copies;
  * under ParameterServerStrategy: the program is the coordinator (`TF_CONFIG` task "chief") of a
    cluster whose ps and worker tasks are `tf.distribute.Server`s in another process; its
    `train_steps` are scheduled on the worker through a `ClusterCoordinator`.

Every result line must match the oracle's within the harness's tolerance. Programs whose TF1
semantics depend on the replica count (per-replica gradient clipping, weighted TF1 reductions,
Estimator + train_distribute's per-replica input_fn batches) are left out of the comparison on
purpose: TF1 gave different numbers on several replicas too.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from tfmigrate.engine import Options, transform_source

from . import forked
from .harness import Run, compare, runs_wanted
from .test_equivalence import oracle_results, program_group

pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
TPU = FIXTURES / "TFM301_tpu_estimator_to_keras"
MIRRORED = [
    "guide_adagrad", "eval_metrics_binary_classifier", "predict_branch_classifier", "mlp_adam_max_steps",
    "training_hooks_logging", "train_and_evaluate_exporters",
]
MULTI_WORKER = [
    "guide_adagrad", "eval_metrics_binary_classifier", "predict_branch_classifier", "restore_model_dir_twice",
    "training_hooks_logging", "train_and_evaluate_exporters",
]
PARAMETER_SERVER = ["guide_adagrad", "eval_metrics_binary_classifier", "predict_branch_classifier"]
TIMEOUT_S = 480  # Generous: the suite runs tests in parallel (xdist), so a neighbour may load the cores.


def _params(names: list[str]) -> list:
    """The names, each in its program's xdist group (the equivalence tests' oracle cache is per worker)."""
    return [pytest.param(name, marks=pytest.mark.xdist_group(program_group(TPU / f"{name}.in.py"))) for name in names]


@functools.cache
def _processes():
    """`tests/runtime/workers/processes.py` (free ports, TF_CONFIG, the ps/worker servers process)."""
    path = HERE.parent / "runtime" / "workers" / "processes.py"
    spec = importlib.util.spec_from_file_location("tfmigrate_test_processes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _migrated(name: str, directory: Path) -> tuple[Path, Path]:
    case = TPU / f"{name}.in.py"
    text = transform_source(case.read_text(encoding="utf-8"), filename=str(case), options=Options(target="ctl")).output
    assert text == case.with_name(f"{name}.ctl.out.py").read_text(encoding="utf-8")
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / "program.py"
    program.write_text(text, encoding="utf-8")
    return case, program


def _env(tf_config: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "TF_USE_LEGACY_KERAS")}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="-1", PYTHONHASHSEED="0", TF_ENABLE_ONEDNN_OPTS="0")
    if tf_config is not None:
        env["TF_CONFIG"] = tf_config
    return env


def _check(case: Path, runs: list[Run]) -> None:
    for run in runs:
        run.check()
    got = [result for run in runs for result in run.results]
    problems = compare(oracle_results(case), got)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _params(MIRRORED))
def test_ctl_program_under_mirrored_two_cpus(name: str, tmp_path: Path) -> None:
    case, program = _migrated(name, tmp_path)
    runs = []
    for _ in range(runs_wanted(case)):
        proc = forked.run(sys.executable, [str(HERE / "mirrored_program.py"), str(program)], tmp_path, _env(), TIMEOUT_S)
        assert "strategy MirroredStrategy" in proc.stdout, proc.stderr[-3000:]
        runs.append(Run(sys.executable, program, proc.returncode, proc.stdout, proc.stderr))
    _check(case, runs)


# Runs the program with the runtime's INFO log on stderr, which names the strategy `make_strategy` chose.
_LOGGED = (
    "import logging, runpy, sys; logging.basicConfig(level=logging.WARNING); "
    "logging.getLogger('tfmigrate.runtime').setLevel(logging.INFO); "
    "runpy.run_path(sys.argv[1], run_name='__main__')"
)


def _start(program: Path, cwd: Path, tf_config: str, log: Path) -> forked.Handle:
    """The migrated program as one process of a cluster, forked from this process's TF server."""
    return forked.server(sys.executable, _env()).start(
        [str(program)], cwd, _env(tf_config), stdout=log.with_suffix(".out"), stderr=log, code=_LOGGED)


def _finish(child: forked.Handle, program: Path, log: Path) -> Run:
    forked.wait_or_kill(child, TIMEOUT_S)
    stdout = log.with_suffix(".out").read_text(errors="replace")
    return Run(sys.executable, program, child.returncode, stdout, log.read_text(errors="replace"))


@pytest.mark.parametrize("name", _params(MULTI_WORKER))
def test_ctl_program_as_two_multi_worker_processes(name: str, tmp_path: Path) -> None:
    local_cluster, tf_config = _processes().local_cluster, _processes().tf_config
    case, program = _migrated(name, tmp_path)
    per_worker: list[list[Run]] = [[], []]
    for attempt in range(runs_wanted(case)):
        cluster = local_cluster(worker=2)
        logs = [tmp_path / f"worker{i}.{attempt}.log" for i in range(2)]
        children = [_start(program, tmp_path, tf_config(cluster, "worker", i), logs[i]) for i in range(2)]
        try:
            for index, child in enumerate(children):
                per_worker[index].append(_finish(child, program, logs[index]))
        finally:
            for child in children:
                child.kill()
    for runs in per_worker:  # Both workers report the cluster's (identical) results.
        assert all("-> CollectiveAllReduceStrategy" in run.stderr for run in runs), runs[0].stderr[-3000:]
        _check(case, runs)
    assert not list(tmp_path.rglob("workertemp_*")), "a non-chief worker left its temporary checkpoint dir"


@pytest.mark.parametrize("name", _params(PARAMETER_SERVER))
def test_ctl_program_as_parameter_server_coordinator(name: str, tmp_path: Path) -> None:
    processes = _processes()
    ProcessGroup, local_cluster, tf_config = processes.ProcessGroup, processes.local_cluster, processes.tf_config
    case, program = _migrated(name, tmp_path / "program")
    cluster = local_cluster(chief=1, worker=1, ps=1)
    with ProcessGroup(tmp_path, TIMEOUT_S) as group:
        ready = tmp_path / "servers.ready"
        servers = group.start("servers", {"role": "servers", "cluster": cluster, "tasks": [["ps", 0], ["worker", 0]], "ready": str(ready)})
        group.wait_for_file(ready, timeout=TIMEOUT_S, watched=[servers])
        log = tmp_path / "chief.log"
        chief = _start(program, program.parent, tf_config(cluster, "chief", 0), log)
        try:
            run = _finish(chief, program, log)
        finally:
            chief.kill()
        assert servers.popen.poll() is None, f"the servers died:\n{servers.log_tail()}"
    assert "-> ParameterServerStrategyV2" in run.stderr, run.stderr[-3000:]
    _check(case, [run])
