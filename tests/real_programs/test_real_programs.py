"""Real published TF1 programs (Google BERT, ALBERT, from PyPI) migrated and checked against the oracle.

See lane.py for what runs and why it is deterministic. Per program: the oracle's reference run is
checked to be a fair reference (it started from the checkpoint in full, trained on one example,
reached the last step), then each codemod target's migration must give its results within 1e-5
relative, every key. `tfmigrate` (keras) and `tfmigrate --target ctl` are both covered; where
the two migrations of a program (it and the package modules it imports) are byte-identical, the
ctl test asserts that identity and checks the same migrated run rather than running it again.

The tests of one program share its oracle reference and run on one xdist worker (group
`program:real/<id>`); the six groups spread over the workers. A migration whose model_fn stays runs
it on the strategy tier (TF2, runtime/model_fn/), the default, and must not fall back to graph mode.
"""

from __future__ import annotations

import pytest

from equivalence.harness import compare

from . import inputs
from .lane import PROGRAMS, TRAIN_STEPS, Program, Session, comparison_scales, results_of, same_migration, tail

pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow]


def program_params(targets: bool = False) -> list:
    params = []
    for program in PROGRAMS:
        mark = pytest.mark.xdist_group(f"program:real/{program.id}")
        if targets:
            params += [pytest.param(program, target, id=f"{program.id}-{target}", marks=mark) for target in ("keras", "ctl")]
        else:
            params.append(pytest.param(program, id=program.id, marks=mark))
    return params


def test_the_lane_covers_the_published_programs() -> None:
    assert {p.id for p in PROGRAMS} == {
        "bert/run_classifier", "bert/run_pretraining", "bert/run_squad",
        "albert/run_classifier", "albert/run_pretraining", "albert/run_squad",
    }


@pytest.mark.parametrize("program", program_params())
def test_oracle_reference_is_fair(program: Program, lane: Session) -> None:
    """The reference run started from the checkpoint in full, on one training example, and trained."""
    reference = lane.reference(program)
    assert reference.variables, "the program logged no trainable variables"
    fresh = sorted(name for name, restored in reference.variables.items() if not restored)
    assert not fresh, f"variables not restored from model.ckpt-0 (they would start random): {fresh}"
    assert len(inputs.tfrecords(reference.train_examples)) == 1, "the training input must hold one example (lane.py)"
    assert reference.results and all(reference.results), reference.results
    if program.kind != "squad":
        assert {r["global_step"] for r in reference.results} == {float(TRAIN_STEPS)}, reference.results


@pytest.mark.parametrize("program,target", program_params(targets=True))
def test_migration_matches_oracle(program: Program, target: str, lane: Session) -> None:
    """Each program's migration, on each target, gives the reference's results within 1e-5 relative,
    in TF2: the kept model_fn runs on the strategy tier (the default), inside the default strategy's
    tf.function; no call falls back to graph mode, and the checkpoints are the strategy tier's, which
    write no TF1 MetaGraph. (The graph-mode tier is the hosted programs' tests' business.)"""
    reference = lane.reference(program)
    migration = lane.migration(program.package, target)
    assert migration.returncode in (0, 1), f"tfmigrate failed on {program.package}:\n{tail(migration.output)}"
    if target == "ctl" and same_migration(program, migration, lane.migration(program.package, "keras")):
        # Byte-identical to the keras migration: the same program, run once (by the keras test).
        target = "keras"
    run, output_dir = lane.migrated(program, target)
    assert run.returncode == 0, (
        f"the migrated {program.id} ({target}) failed (exit {run.returncode}); tfmigrate said:\n"
        f"{tail(migration.output, 5)}\n--- the run's last lines:\n{tail(run.stderr)}"
    )
    fallbacks = [line for line in run.stderr.splitlines() if "runs in graph mode" in line]
    assert not fallbacks, fallbacks
    assert list(output_dir.glob("model.ckpt-*.index")) and not list(output_dir.glob("model.ckpt-*.meta"))
    problems = compare(reference.results, results_of(program, output_dir), scales=comparison_scales(program, reference.results))
    assert not problems, "\n".join(problems)
