"""The real-program lane beyond the default strategy: BERT's migrations on the strategy tier (the
model_fn as written, in the strategy's tf.function) replicated, on the TPU code path, compiled
with XLA and on two workers, each against the oracle.

What each run must give, and why (the lane's inputs are lane.py's: one training example, so every
batch, and every replica's share of it, holds that example):

  * **MirroredStrategy, 2 logical CPUs** (`TFMIGRATE_STRATEGY=mirrored`, the global batch of 4
    split in two): the oracle's one-device numbers. With `--use_tpu=false` the gradients are meaned
    over the replicas before BERT clips them (runtime/model_fn/strategy/replicas.py), as one device clips
    the whole batch's.
  * **The TPU code path under MirroredStrategy** (`--use_tpu=true --num_tpu_cores=2`): BERT clips
    each replica's gradients and `CrossShardOptimizer` *sums* them across the cores (BERT calls
    `tf.gradients` itself, so nothing divides by the core count). That is not the one-device run:
    the reference is the original on the oracle as a 2-core TPU whose cores are fed the same batch
    (tf1_launcher.py's `TF1_LAUNCHER_TPU_SHARDS`), exact here because each core's share of the
    batch is the same example. The test checks that this reference differs from the one-device
    one (by 4e-3 relative, measured), so the comparison can tell the two code paths apart.
  * **XLA** (`TFMIGRATE_JIT_COMPILE=1`, default strategy, `--use_tpu` false and true): the
    oracle's numbers within the lane's 1e-5; measured, XLA's fusion and reordering move them by
    at most 1.1e-7 relative, and no looser tolerance is needed. On one core the TPU code path's
    sum is over that core only, and its one-hot embedding lookup is exact, so its reference is
    the one-device run.
  * **MultiWorkerMirrored, two worker processes on 127.0.0.1** (`TFMIGRATE_STRATEGY=multi_worker`,
    `TF_CONFIG`), each worker its own output_dir (the program writes its input records there):
    every worker's results are those of one worker with the same global batch, the oracle's. Only
    the chief writes checkpoints; the other worker takes the chief's values when a call starts. run_pretraining trains at a real learning rate, so
    it shows the cross-worker all-reduce; run_classifier (the lane's classifiers train at learning
    rate 0, see lane.py) shows the evaluation's metrics summed across the workers.

Only the keras target's migrations run here: BERT's model_fns stay as written on both targets, and
the lane's main test checks that the two migrations of a program are byte-identical.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from equivalence import forked
from equivalence.harness import compare
from runtime.workers.processes import local_cluster, tf_config

from .lane import (
    PROGRAMS,
    TIMEOUT,
    Program,
    Run,
    Session,
    _env,
    comparison_scales,
    migrated_argv,
    on_tpu_code_path,
    results_of,
    run_current,
    tail,
)

pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow]

MIRRORED = {"TFMIGRATE_STRATEGY": "mirrored", "TFMIGRATE_CPU_DEVICES": "2"}
XLA = {"TFMIGRATE_JIT_COMPILE": "1"}


def program(program_id: str) -> Program:
    return next(p for p in PROGRAMS if p.id == program_id)


def grouped(program_id: str, *args, **kwargs):
    """A param in its program's xdist group, so that it shares that program's oracle reference."""
    return pytest.param(program(program_id), *args, marks=pytest.mark.xdist_group(f"program:real/{program_id}"), **kwargs)


def assert_in_tf2(run: Run, output_dir: Path, what: str) -> None:
    assert run.returncode == 0, f"{what} failed (exit {run.returncode}):\n{tail(run.stderr)}"
    fallbacks = [line for line in run.stderr.splitlines() if "runs in graph mode" in line]
    assert not fallbacks, fallbacks
    assert list(output_dir.glob("model.ckpt-*.index")) and not list(output_dir.glob("model.ckpt-*.meta"))


def run_variant(lane: Session, program: Program, name: str, env: dict[str, str], tpu_cores: int | None) -> tuple[Run, Path]:
    migration = lane.migration(program.package, "keras")
    reference = lane.reference(program)
    work = lane.root / "runs" / f"keras-{name}" / program.id.replace("/", "-")
    work.mkdir(parents=True)
    output_dir = work / "migrated-run"
    argv = migrated_argv(program, migration, lane.inputs, reference.init_checkpoint, output_dir)
    if tpu_cores is not None:
        argv = on_tpu_code_path(argv, tpu_cores)
    return run_current(argv, package_parent=migration.package_parent, cwd=work, **env), output_dir


@pytest.mark.parametrize(
    ("program", "env", "tpu_cores", "log_line"),
    [
        grouped("bert/run_pretraining", MIRRORED, None, "Training on 2 replicas of MirroredStrategy", id="mirrored"),
        grouped("bert/run_pretraining", MIRRORED, 2, "Training on 2 replicas of MirroredStrategy", id="mirrored-tpu"),
        grouped("bert/run_pretraining", XLA, None, " step(s) per call (XLA).", id="xla"),
        grouped("bert/run_pretraining", XLA, 8, " step(s) per call (XLA).", id="xla-tpu"),
    ],
)
def test_bert_trains_in_tf2_under(program: Program, env: dict[str, str], tpu_cores: int | None, log_line: str,
                                  lane: Session, request: pytest.FixtureRequest) -> None:
    reference = lane.reference(program).results
    replicas = 2 if env is MIRRORED else 1
    if tpu_cores is not None and replicas > 1:
        one_device = reference
        reference = lane.tpu_reference(program, replicas)
        assert compare(one_device, reference), "the TPU code path's reference should differ from the one-device run's"
    run, output_dir = run_variant(lane, program, request.node.callspec.id, env, tpu_cores)
    assert_in_tf2(run, output_dir, f"the migrated {program.id} under {env} (TPU cores: {tpu_cores})")
    assert log_line in run.stderr
    problems = compare(reference, results_of(program, output_dir), scales=comparison_scales(program, reference))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("program", [grouped("bert/run_pretraining", id="run_pretraining"),
                                     grouped("bert/run_classifier", id="run_classifier")])
def test_bert_trains_on_two_workers(program: Program, lane: Session) -> None:
    migration = lane.migration(program.package, "keras")
    reference = lane.reference(program)
    cluster = local_cluster(worker=2)
    workers = []
    try:
        for index in range(2):
            work = lane.root / "runs" / "keras-multi-worker" / program.id.replace("/", "-") / f"worker-{index}"
            work.mkdir(parents=True)
            output_dir = work / "migrated-run"
            env = {**_env(migration.package_parent), "TFMIGRATE_STRATEGY": "multi_worker",
                   "TF_CONFIG": tf_config(cluster, "worker", index)}
            argv = migrated_argv(program, migration, lane.inputs, reference.init_checkpoint, output_dir)
            log = work / "log"
            child = forked.server(sys.executable, env).start(argv, work, env, stdout=log, stderr=log)
            workers.append((child, log, output_dir))
        for index, (child, log, output_dir) in enumerate(workers):
            finished = forked.wait_or_kill(child, TIMEOUT)
            text = log.read_text(errors="replace")
            assert finished, f"worker {index} did not finish in {TIMEOUT}s:\n{tail(text)}"
            run = Run([], child.returncode, "", text)
            if index == 0:
                assert_in_tf2(run, output_dir, f"worker {index} of the migrated {program.id}")
            else:  # only the chief writes checkpoints
                assert run.returncode == 0, f"worker {index} failed (exit {run.returncode}):\n{tail(text)}"
                assert "runs in graph mode" not in text and not list(output_dir.glob("model.ckpt-*"))
            assert "Training on 2 replicas of CollectiveAllReduceStrategy" in text
            problems = compare(reference.results, results_of(program, output_dir),
                               scales=comparison_scales(program, reference.results))
            assert not problems, f"worker {index}:\n" + "\n".join(problems)
    finally:
        for child, _, _ in workers:
            child.kill()
