"""The differential check of one generated program: the original on the oracle, its migration on
each target on current TF, every `eval_results` line compared within 1e-5 (keys included).

A migration may decline (a TODO left, the file not migrated); it may never claim to be done and
then crash or give other numbers. `Verdict.wrong` says which targets did that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tfmigrate.engine import Options, transform_source

from equivalence.harness import compare, run_continued, run_current, run_oracle, run_oracle_continued
from .choices import choose
from .program import continues_from_oracle, render

TARGETS = ("keras", "ctl")


@dataclass
class Outcome:
    """One target's migration of a program and what running it gave."""

    target: str
    status: str  # the codemod's: migrated, todo, error, unchanged
    tiers: list[str]
    problems: list[str] = field(default_factory=list)  # empty: equal to the oracle

    @property
    def claimed(self) -> bool:
        """The migration says it is done (no TODO, no error)."""
        return self.status == "migrated"

    def line(self) -> str:
        state = "equal" if not self.problems else "; ".join(self.problems)[:2000]
        return f"{self.target}: {self.status} ({', '.join(self.tiers) or 'no estimator'}): {state}"


@dataclass
class Verdict:
    seed: int
    source: str
    outcomes: list[Outcome]

    @property
    def wrong(self) -> list[Outcome]:
        """Targets that claimed to be done and crashed or differ: the defects this check exists for."""
        return [o for o in self.outcomes if o.claimed and o.problems]

    @property
    def declined(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.claimed]

    def report(self) -> str:
        return f"seed {self.seed}: " + " | ".join(o.line() for o in self.outcomes)


# A regression head's outputs are of the labels' size, about 1 (0.8 x0 - 0.3 x1 + 0.1 with x ~ N(0, 1):
# program.py), and two results are sums of them that can cancel to near 0 (seed 506's
# `mean_prediction`, 1.6e-5, differed by 8.6e-9: float32 rounding of values near 0.5). Those two
# are compared at the size of what they sum, as the lane compares logits (`comparison_scales`).
_PREDICTED = 20  # predict_input_fn's examples


def result_scales(head: str) -> dict[str, float]:
    """The scale each result is compared at where its own size is not the scale of its terms."""
    if head != "regression":
        return {}
    return {"mean_prediction": 1.0, "predictions": float(_PREDICTED)}


def _failure(run) -> str | None:
    if run.returncode != 0:
        tail = [line for line in run.stderr.strip().splitlines() if line.strip()][-3:]
        return f"exit {run.returncode}: " + " / ".join(tail)
    return None


def check(seed: int, workdir: Path, targets: tuple[str, ...] = TARGETS) -> Verdict:
    """Generate `seed`'s program in `workdir`, run it on the oracle, migrate and run it per target.

    The oracle must run it (a generated program TF 1.x rejects is the generator's defect: raised).
    """
    choices = choose(seed)
    source = render(choices)
    original_dir = workdir / "oracle"
    original_dir.mkdir(parents=True)
    original = original_dir / "program.py"
    original.write_text(source, encoding="utf-8")
    continued = continues_from_oracle(choices)
    if continued:
        expected, _, _ = state = run_oracle_continued(original, original_dir)
    else:
        run = run_oracle(original, original_dir)
        if run.returncode != 0:
            raise AssertionError(f"seed {seed}: the oracle rejects the generated program:\n{run.stderr[-4000:]}")
        expected = run.results
    outcomes: list[Outcome] = []
    ran: dict[str, Outcome] = {}  # migrated text -> its outcome: a target migrating to the same text is not run again
    for target in targets:
        result = transform_source(source, filename="program.py", options=Options(target=target))
        tiers = [site["tier"] for site in result.estimators]
        outcome = Outcome(target, result.status, tiers)
        outcomes.append(outcome)
        if result.error is not None:
            outcome.problems.append(f"codemod error {result.error.code}: {result.error.message}")
            continue
        if result.output in ran:
            outcome.problems = ran[result.output].problems
            continue
        ran[result.output] = outcome
        target_dir = workdir / target
        target_dir.mkdir()
        migrated = target_dir / "program.py"
        migrated.write_text(result.output, encoding="utf-8")
        try:
            if continued:
                want, got = run_continued(original, migrated, target_dir, state)
            else:
                migrated_run = run_current(migrated, target_dir)
                failure = _failure(migrated_run)
                if failure:
                    outcome.problems.append(failure)
                    continue
                want, got = expected, migrated_run.results
        except AssertionError as error:  # run_continued's check(): the migrated run failed
            outcome.problems.append(str(error).strip().splitlines()[-1][:1000])
            continue
        outcome.problems += compare(want, got, scales=result_scales(choices.head))
    return Verdict(seed, source, outcomes)


def keep(verdict: Verdict, directory: Path) -> Path:
    """Write `verdict`'s program and report to `directory/seed_<n>/` for a reproduction."""
    out = directory / f"seed_{verdict.seed}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "program.py").write_text(verdict.source, encoding="utf-8")
    (out / "report.txt").write_text(verdict.report() + "\n", encoding="utf-8")
    return out
