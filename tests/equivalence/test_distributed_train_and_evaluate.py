"""Distributed `train_and_evaluate`: a chief + worker + evaluator cluster of a migrated program.

`distributed_train_and_evaluate` (a TPUEstimator program, use_tpu=False, `train_batch_size` the
global batch) runs migrated, on both targets, as three processes on 127.0.0.1 with one working
directory and a `TF_CONFIG` each (cluster: chief, worker, evaluator; free ports):

  * the chief and the worker train under the MultiWorkerMirroredStrategy `make_strategy("auto")`
    picks for them, print no evaluation and return None, as TF1's training tasks did;
  * the evaluator (a local strategy) evaluates checkpoints of `model_dir` as they appear, calls
    the exporters after each evaluation, and exits after the checkpoint of `max_steps`.

Which intermediate checkpoints the evaluator sees depends on timing, so the comparison is of its
final evaluation and final export (the `final=1.0` line and the `exported` line) with the last
two result lines of the oracle's *single-process* run of the same TF1 program: with the same
global batch the math is the same (a TF1 chief + worker cluster without ps tasks trained the
chief's variables alone, with the same global batch). Every intermediate evaluation the evaluator
printed must also equal the oracle's evaluation of the same step (the checkpoint of step 0, which
a TF1 evaluator evaluated too when it saw it, the local run never evaluates).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from tfmigrate.engine import Options, transform_source

from .harness import compare, parse_results
from .test_ctl_strategies import TIMEOUT_S, _finish, _processes, _start
from .test_equivalence import oracle_results

pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow]

CASE = FIXTURES / "TFM301_tpu_estimator_to_keras" / "distributed_train_and_evaluate.in.py"
SUFFIX = {"keras": ".out.py", "ctl": ".ctl.out.py"}


@pytest.mark.parametrize("target", ["keras", "ctl"])
def test_chief_worker_evaluator_cluster_matches_oracle(target: str, tmp_path: Path) -> None:
    processes = _processes()
    text = transform_source(CASE.read_text(encoding="utf-8"), filename=str(CASE), options=Options(target=target)).output
    assert text == CASE.with_name(CASE.name.replace(".in.py", SUFFIX[target])).read_text(encoding="utf-8")
    program = tmp_path / "program.py"
    program.write_text(text, encoding="utf-8")
    cluster = processes.local_cluster(chief=1, worker=1, evaluator=1)
    tasks = [("chief", 0), ("worker", 0), ("evaluator", 0)]
    popens, runs = [], {}
    try:
        for task_type, index in tasks:
            log = tmp_path / f"{task_type}.log"
            popens.append((task_type, log, _start(program, tmp_path, processes.tf_config(cluster, task_type, index), log)))
        for task_type, log, popen in popens:
            runs[task_type] = _finish(popen, program, log)
    finally:
        for _, _, popen in popens:
            if popen.poll() is None:
                popen.kill()
                popen.wait(timeout=30)
    for task_type, run in runs.items():
        assert run.returncode == 0, f"{task_type} exited with {run.returncode}:\n{run.stderr[-4000:]}"
    for task_type in ("chief", "worker"):
        assert "-> CollectiveAllReduceStrategy" in runs[task_type].stderr, runs[task_type].stderr[-3000:]
        assert not parse_results(runs[task_type].stdout), f"the {task_type} evaluated:\n{runs[task_type].stdout}"
    assert "-> CollectiveAllReduceStrategy" not in runs["evaluator"].stderr

    want = oracle_results(CASE)
    got = parse_results(runs["evaluator"].stdout)
    assert got and got[-2].get("final") == 1.0, runs["evaluator"].stdout
    problems = compare(want[-2:], got[-2:])
    by_step = {r["global_step"]: r for r in want if "global_step" in r}
    for result in got[:-2]:  # Earlier checkpoints the evaluator happened to see (step 0's the local run skips).
        if result["global_step"] in by_step:
            problems += compare([by_step[result["global_step"]]], [result])
    assert not problems, "\n".join(problems)
    assert not list(tmp_path.rglob("workertemp_*")), "the worker left its temporary checkpoint dir"
