"""Distributed `train_and_evaluate`: a chief + worker + evaluator cluster, TF1's and the migration's.

`distributed_train_and_evaluate` (a TPUEstimator program, use_tpu=False, `train_batch_size` the
global batch) runs as three processes on 127.0.0.1 sharing one working directory, each with the
`TF_CONFIG` a TF1 job gave it: the cluster names the chief and the worker (free ports), and the
evaluator's task type is "evaluator" (outside the cluster, as TF1's documentation set it up).

  * On the oracle, TF1's `_TrainingExecutor` runs: the chief trains and writes checkpoints (no ps
    tasks: its variables are its own, the worker trains a copy of its own or finds `max_steps`
    already saved), the evaluator evaluates checkpoints as they appear and exits after the one of
    `max_steps`.
  * Migrated (both targets): the chief and the worker train together under the
    MultiWorkerMirroredStrategy `make_strategy("auto")` picks for them, with the same global batch,
    and print no evaluation; the evaluator (a local strategy) evaluates and exports as TF1's did.

A parameter-server cluster (chief, worker, ps, and the evaluator) runs the migration only: the
chief coordinates ParameterServerStrategy training, the ps and worker tasks serve, and the
evaluator's results are compared with the oracle's single-process run.

Which intermediate checkpoints an evaluator sees depends on timing, so the comparison is of the
final evaluation and the final export (the `final=1.0` line and the `exported` line): the migrated
evaluator's must equal the oracle evaluator's, and both the last two lines of the oracle's
single-process run. Every other evaluation the migrated evaluator printed must equal the
oracle's evaluation of the same step (in the single-process run, or in the TF1 evaluator's, which
also evaluates the checkpoint of step 0 when it sees it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from tfmigrate.engine import Options, transform_source

from . import forked
from .harness import Run, compare, parse_results
from .oracle import oracle_python
from .test_ctl_strategies import TIMEOUT_S, _env, _processes
from .test_equivalence import oracle_results, program_group

CASE = FIXTURES / "TFM301_tpu_estimator_to_keras" / "distributed_train_and_evaluate.in.py"
# In the program's xdist group: its equivalence tests' oracle results are shared (per worker).
pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow, pytest.mark.xdist_group(program_group(CASE))]
SUFFIX = {"keras": ".out.py", "ctl": ".ctl.out.py"}
TASKS = ("chief", "worker", "evaluator")

# Runs the program with the runtime's INFO log on stderr (it names the strategy `make_strategy` chose).
_LOGGED = (
    "import logging, runpy, sys; logging.basicConfig(level=logging.WARNING); "
    "logging.getLogger('tfmigrate.runtime').setLevel(logging.INFO); "
    "runpy.run_path(sys.argv[1], run_name='__main__')"
)


def _run_cluster(python: str | Path, program: Path, cwd: Path, **jobs: int) -> dict[str, Run]:
    """The program on every task of `jobs` (default: a chief and a worker) plus an evaluator.

    The chief and the evaluator must exit with 0; the tasks of a parameter-server cluster's "ps" and
    "worker" jobs serve until they are killed, after the chief and the evaluator are done. Every
    process is killed on the way out.
    """
    jobs = jobs or {"chief": 1, "worker": 1}
    cluster = _processes().local_cluster(**jobs)
    serving = {"ps", "worker"} if "ps" in jobs else set()
    children: dict[str, forked.Handle] = {}
    tasks = [(job, index) for job, count in jobs.items() for index in range(count)] + [("evaluator", 0)]
    server = forked.server(python, _env())
    try:
        for job, index in tasks:
            name = f"{job}{index or ''}"
            tf_config = json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
            children[name] = server.start([str(program)], cwd, _env(tf_config), code=_LOGGED,
                                          stdout=cwd / f"{name}.out", stderr=cwd / f"{name}.log")
        runs = {}
        for name, child in children.items():
            if name.rstrip("0123456789") in serving:
                continue
            forked.wait_or_kill(child, TIMEOUT_S)
            stdout, stderr = ((cwd / f"{name}{suffix}").read_text(errors="replace") for suffix in (".out", ".log"))
            runs[name] = Run(str(python), program, child.returncode, stdout, stderr)
        for name, child in children.items():
            if name not in runs:
                assert child.poll() is None, f"{name} exited:\n{(cwd / f'{name}.log').read_text(errors='replace')[-3000:]}"
                runs[name] = Run(str(python), program, 0, "", (cwd / f"{name}.log").read_text(errors="replace"))
    finally:
        for child in children.values():
            if child.poll() is None:
                child.kill()
                child.wait(30)
    for name, run in runs.items():
        assert run.returncode == 0, f"{name} exited with {run.returncode}:\n{run.stderr[-4000:]}"
    return runs


@pytest.fixture(scope="module")
def tf1_cluster(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The TF1 program as a cluster on the oracle (run once, for both targets)."""
    directory = tmp_path_factory.mktemp("tf1-cluster")
    program = directory / "program.py"
    program.write_text(CASE.read_text(encoding="utf-8"), encoding="utf-8")
    return _run_cluster(oracle_python(), program, directory)


def _migrated(target: str, directory: Path) -> Path:
    text = transform_source(CASE.read_text(encoding="utf-8"), filename=str(CASE), options=Options(target=target)).output
    assert text == CASE.with_name(CASE.name.replace(".in.py", SUFFIX[target])).read_text(encoding="utf-8")
    program = directory / "program.py"
    program.write_text(text, encoding="utf-8")
    return program


def _check_evaluations(local: list[dict], evaluator: Run, tf1_evaluator: Run | None = None) -> None:
    """The final evaluation and export as TF1's; every other evaluation as TF1's of that step."""
    problems = compare(local[-2:], _final(evaluator))
    by_step = {r["global_step"]: r for r in local[:-1]}
    if tf1_evaluator is not None:
        problems += compare(_final(tf1_evaluator), _final(evaluator))
        by_step.update({r["global_step"]: r for r in parse_results(tf1_evaluator.stdout)[:-1]})
    for result in parse_results(evaluator.stdout)[:-2]:  # Checkpoints the evaluator happened to see.
        if result["global_step"] in by_step:
            problems += compare([by_step[result["global_step"]]], [result])
    assert not problems, "\n".join(problems)


def _final(run: Run) -> list[dict]:
    results = parse_results(run.stdout)
    assert len(results) >= 2 and results[-2].get("final") == 1.0, run.stdout
    return results[-2:]


@pytest.mark.parametrize("target", ["keras", "ctl"])
def test_chief_worker_evaluator_cluster_matches_tf1(target: str, tf1_cluster: dict[str, Run], tmp_path: Path) -> None:
    runs = _run_cluster(sys.executable, _migrated(target, tmp_path), tmp_path)
    for task in ("chief", "worker"):
        assert "-> CollectiveAllReduceStrategy" in runs[task].stderr, runs[task].stderr[-3000:]
        assert not parse_results(runs[task].stdout), f"the {task} evaluated:\n{runs[task].stdout}"
        assert not parse_results(tf1_cluster[task].stdout)
    assert "-> CollectiveAllReduceStrategy" not in runs["evaluator"].stderr
    _check_evaluations(oracle_results(CASE), runs["evaluator"], tf1_cluster["evaluator"])
    assert not list(tmp_path.rglob("workertemp_*")), "the worker left its temporary checkpoint dir"


@pytest.mark.parametrize("target", ["keras", "ctl"])
def test_parameter_server_cluster_with_evaluator(target: str, tmp_path: Path) -> None:
    """chief + worker + ps (+ evaluator): the chief coordinates ParameterServerStrategy training, the
    ps and worker tasks serve, the evaluator evaluates. TF1 trained asynchronously there (its chief
    and worker both ran steps), so the comparison is with the oracle's single-process run: one
    worker runs the coordinator's steps in order, on the same global batch."""
    runs = _run_cluster(sys.executable, _migrated(target, tmp_path), tmp_path, chief=1, worker=1, ps=1)
    assert "-> ParameterServerStrategyV2" in runs["chief"].stderr, runs["chief"].stderr[-3000:]
    assert not parse_results(runs["chief"].stdout), runs["chief"].stdout
    for task in ("worker", "ps"):
        assert "runs its tf.distribute.Server" in runs[task].stderr, runs[task].stderr[-3000:]
    _check_evaluations(oracle_results(CASE), runs["evaluator"])
