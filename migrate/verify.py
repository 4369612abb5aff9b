"""`tfmigrate verify`: run the original on the oracle and the migration on current TF, compare.

The original runs in the oracle environment (TensorFlow 2.15 + Estimator, `oracle_env`), the
migration in this one, each in a copy of the program's directory and under the probe
`tfmigrate/runtime/proof.py`, which records every `evaluate` result and every predicted example.
A program that records no evaluate or predict result (it only trains) is compared by the
checkpoints its `train` calls leave, variable by variable (`compare_trained`).
The migration starts from the original's first checkpoint (the probe copies it aside on the
original's side and seeds the migration's model directory with it), so both train from the same
weights. Graphs the program leaves unseeded get the same graph seed on both sides (the probe's
`--seed-graphs`), so a program without `tf_random_seed` draws the same dropout masks and shuffles
in both (in the hosted tier, which builds TF1 graphs as TF 1.x did). A model directory outside the
program's directory (`/tmp/mnist_model`) is kept per run under the work directory instead (the
probe's `--model-dirs`; the report notes it): one shared path would let the migration continue
from the original's checkpoints, and start both from a model the user keeps there. Every key of
every result must agree within `rtol`.

Nothing here imports TensorFlow: both programs run in subprocesses.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .oracle_env import oracle_python, oracle_run_env, quiet_env
from .tf1_program import is_tf1_project

PROBE = Path(__file__).resolve().parent.parent / "runtime" / "proof.py"
_IGNORE = shutil.ignore_patterns(".git", ".venv", "venv", "__pycache__", "*.pyc", ".ipynb_checkpoints")


class VerifyError(Exception):
    """A run could not be made (exit 2): the message says which and shows its last lines."""


@dataclass
class Row:
    result: int
    kind: str
    key: str
    original: Any
    migrated: Any
    rel: float | None
    ok: bool


@dataclass
class Verdict:
    rows: list[Row] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the runs did otherwise than the program says (not problems)

    @property
    def ok(self) -> bool:
        return not self.problems and all(row.ok for row in self.rows)


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [item for key in sorted(value) for item in _flatten(f"{prefix}{key}" if not prefix else f"{prefix}.{key}", value[key])]
    if isinstance(value, list):
        return [item for i, v in enumerate(value) for item in _flatten(f"{prefix}[{i}]", v)]
    return [(prefix, value)]


def _close(a: Any, b: Any, rtol: float, scale: float = 0.0) -> tuple[bool, float | None]:
    """Whether two values agree: floats within `rtol` of the larger of the two, or of `scale`
    where that is larger."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b), None
        size = max(abs(a), abs(b), scale)
        rel = abs(a - b) / max(size, 1e-30)
        return abs(a - b) <= rtol * size + 1e-12, rel
    return a == b, None


def _output(key: str) -> str:
    """The prediction output a flattened key belongs to: `probabilities[1]` and `probabilities[0]`
    are entries of `probabilities`."""
    return re.split(r"[.\[]", key, maxsplit=1)[0]


def prediction_scales(original: list[dict]) -> dict[str, float]:
    """Each prediction output's scale: the largest magnitude the original predicts for it over
    every example. A predicted value is a float32 sum whose rounding is relative to the terms it
    sums, not to the sum, so one that cancels to near 0 among predictions of order 1 is compared
    at theirs (measured: 7.79e-5 against 7.79e-5 + 7.5e-9 among values near 0.3, 1e-4 relative to
    itself, 2e-8 to its output's scale). Evaluate results keep their own size."""
    scales: dict[str, float] = {}
    for entry in original:
        if entry["kind"] != "predict":
            continue
        for key, value in _flatten("", entry["values"]):
            if isinstance(value, float) and math.isfinite(value):
                scales[_output(key)] = max(scales.get(_output(key), 0.0), abs(value))
    return scales


def compare(original: list[dict], migrated: list[dict], rtol: float) -> Verdict:
    """Every recorded result of the original against the migration's, key by key (a prediction
    at its output's scale, `prediction_scales`)."""
    verdict = Verdict()
    if not original:
        verdict.problems.append("the original recorded no evaluate or predict result: nothing to compare")
    if len(original) != len(migrated):
        verdict.problems.append(f"the original recorded {len(original)} results, the migration {len(migrated)}")
    scales = prediction_scales(original)
    for index, (want, got) in enumerate(zip(original, migrated)):
        if want["kind"] != got["kind"]:
            verdict.problems.append(f"result {index}: {want['kind']} in the original, {got['kind']} in the migration")
            continue
        payload = "results" if want["kind"] == "evaluate" else "values"
        left, right = dict(_flatten("", want[payload])), dict(_flatten("", got[payload]))
        if set(left) != set(right):
            verdict.problems.append(
                f"result {index} ({want['kind']}): keys {sorted(left)} in the original, {sorted(right)} in the migration"
            )
        for key in sorted(set(left) & set(right)):
            scale = scales.get(_output(key), 0.0) if want["kind"] == "predict" else 0.0
            ok, rel = _close(left[key], right[key], rtol, scale)
            verdict.rows.append(Row(index, want["kind"], key, left[key], right[key], rel, ok))
    return verdict


def _results(entries: list[dict], kinds: tuple[str, ...] = ("evaluate", "predict")) -> list[dict]:
    """The results of these kinds among a run's records (not its notes)."""
    return [entry for entry in entries if entry["kind"] in kinds]


def compare_trained(original: list[dict], migrated: list[dict], rtol: float) -> Verdict:
    """For a program that records no evaluate or predict result: the variables of the checkpoint
    each `train` left (`proof.py`'s summaries), by name. A sum at the scale of its magnitudes, a
    value at its variable's largest magnitude (a float32 sum or weight rounds relative to those,
    as `prediction_scales` says of predictions);
    a variable of the original's the migration's checkpoint lacks is a problem."""
    verdict = Verdict(notes=["the original recorded no evaluate or predict result: the checkpoints its train "
                             "calls left are compared, variable by variable"])
    if not original:
        verdict.problems.append("the original recorded no evaluate, predict or train result: nothing to compare")
    if len(original) != len(migrated):
        verdict.problems.append(f"the original trained {len(original)} times, the migration {len(migrated)}")
    for index, (want, got) in enumerate(zip(original, migrated)):
        left, right = want["values"], got["values"]
        missing = sorted(set(left) - set(right))
        if missing and len(missing) == len(left):
            verdict.problems.append(
                f"train {index}: the migration's checkpoint names none of the original's {len(left)} variables (a "
                "Keras model's checkpoint names them its own way): they cannot be compared by name")
        elif missing:
            verdict.problems.append(
                f"train {index}: the migration's checkpoint lacks {len(missing)} of the original's {len(left)} variables "
                f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})")
        for name in sorted(set(left) & set(right)):
            pairs = _variable_pairs(name, left[name], right[name])
            if pairs is None:
                verdict.problems.append(f"train {index}: `{name}` has another shape in the migration")
                continue
            for key, x, y, scale in pairs:
                ok, rel = _close(float(x), float(y), rtol, scale)
                verdict.rows.append(Row(index, "train", key, x, y, rel, ok))
    return verdict


def _variable_pairs(name: str, a: Any, b: Any) -> list[tuple[str, Any, Any, float]] | None:
    """(key, original, migrated, scale) for each number of one variable's summaries (a list of its
    values, or `proof.py`'s sums and samples); None where the two are not of one shape."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        largest = max((abs(x) for x in a), default=0.0)
        return [(f"{name}[{i}]", x, y, largest) for i, (x, y) in enumerate(zip(a, b))]
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        pairs = [(f"{name}.l1", a["l1"], b["l1"], 0.0), (f"{name}.max", a["max"], b["max"], 0.0),
                 (f"{name}.sum", a["sum"], b["sum"], a["l1"])]
        return pairs + [(f"{name}.at[{i}]", x, y, a["max"]) for i, (x, y) in enumerate(zip(a["at"], b["at"]))]
    return None


def _read(record: Path) -> list[dict]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(python: str, probe_args: list[str], program: Path | str, args: list[str], cwd: Path, timeout: int,
         env: dict[str, str] | None = None) -> None:
    """Runs a program file, or a module (`-m name`, given as a str) from `cwd`, under the probe
    (in `env`, `quiet_env()` by default)."""
    target = ["-m", program] if isinstance(program, str) else [str(program)]
    program = Path(program) if isinstance(program, str) else program
    command = [python, str(PROBE), *probe_args, *target, "--", *args]
    try:
        proc = subprocess.run(command, cwd=cwd, env=env or quiet_env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise VerifyError(f"{program.name} did not finish within {timeout} s under {python}") from exc
    if proc.returncode != 0:
        raise VerifyError(f"{program.name} failed under {python} (exit {proc.returncode}):\n{failure_tail(proc.stderr or proc.stdout)}")


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?$")


def failure_tail(output: str, lines: int = 15) -> str:
    """A failed run's last `lines` lines, led by its last exception line when they do not hold
    it: TensorFlow's graph-mode errors end with the stack where the failing op was made, after the
    message that says what failed (a key missing from a checkpoint, say)."""
    every = output.splitlines()
    tail = every[-lines:]
    if not any(_EXCEPTION_LINE.match(line) for line in tail):
        raised = next((line for line in reversed(every[:-lines]) if _EXCEPTION_LINE.match(line)), None)
        if raised is not None:
            return "\n".join([raised[:1000], "...", *tail])
    return "\n".join(tail)


def _copy_tree(program: Path, into: Path) -> Path:
    """Copies the program's directory into `into`; returns the program's path there."""
    shutil.copytree(program.parent, into, ignore=_IGNORE)
    return into / program.name


def _migrate(tree: Path, out: Path, target: str) -> None:
    command = [sys.executable, "-c", "from tfmigrate.cli import main; main()", str(tree), "--out-dir", str(out), "-q"]
    if target != "keras":
        command += ["--target", target]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise VerifyError(f"tfmigrate could not migrate {tree}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def _module_file(root: Path, module: str) -> Path:
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__main__.py"):
        if candidate.is_file():
            return candidate
    raise VerifyError(f"no module {module!r} under {root}")


def verify(
    original: Path,
    migrated: Path | None = None,
    *,
    module: str | None = None,
    args: list[str] | None = None,
    rtol: float = 1e-5,
    target: str = "keras",
    logdir: Path | None = None,
    timeout: int = 1800,
    progress: Callable[[str], None] | None = None,
) -> Verdict:
    """Runs both programs and compares what they recorded (raises VerifyError if a run fails)."""
    args = list(args or [])
    say = progress or (lambda message: None)
    oracle = str(oracle_python(progress=say))
    with tempfile.TemporaryDirectory(prefix="tfmigrate-verify-") as work:
        work_dir = Path(work)
        if module is not None:
            # `original`/`migrated` are project roots; the module runs from each, as `python -m`.
            _module_file(original, module)  # it must exist
            shutil.copytree(original, work_dir / "original", ignore=_IGNORE)
            if migrated is None:
                say(f"migrating {original} (--target {target})")
                _migrate(work_dir / "original", work_dir / "migrated", target)
            else:
                shutil.copytree(migrated, work_dir / "migrated", ignore=_IGNORE)
            first: Path | str = module
            first_cwd, second_cwd = work_dir / "original", work_dir / "migrated"
            second: Path | str = module
        else:
            first = _copy_tree(original, work_dir / "original")
            if migrated is None:
                say(f"migrating {original.parent} (--target {target})")
                _migrate(work_dir / "original", work_dir / "migrated", target)
                second = work_dir / "migrated" / original.name
            else:
                second = _copy_tree(migrated, work_dir / "migrated")
            first_cwd, second_cwd = first.parent, second.parent
        tree = work_dir / "original"
        sources = (path.read_text(encoding="utf-8", errors="replace") for path in tree.rglob("*.py"))
        tf1 = ["--tf1"] if is_tf1_project(sources) else []
        checkpoints = work_dir / "first-checkpoints"
        logs = {} if logdir is None else {"original": logdir / "original", "migrated": logdir / "migrated"}
        say(f"running the original on the oracle ({oracle})")
        seed = ["--seed-graphs"]
        probe = ["--record", str(work_dir / "original.jsonl"), "--save-first-checkpoints", str(checkpoints), *tf1, *seed,
                 "--model-dirs", str(work_dir / "model-dirs" / "original")]
        _run(oracle, probe + (["--logdir", str(logs["original"])] if logs else []), first, args, first_cwd, timeout,
             oracle_run_env())
        say(f"running the migration on this environment ({sys.executable})")
        probe = ["--record", str(work_dir / "migrated.jsonl"), "--seed-from", str(checkpoints), *seed,
                 "--model-dirs", str(work_dir / "model-dirs" / "migrated")]
        _run(sys.executable, probe + (["--logdir", str(logs["migrated"])] if logs else []), second, args, second_cwd, timeout)
        original_entries, migrated_entries = _read(work_dir / "original.jsonl"), _read(work_dir / "migrated.jsonl")
        results, trained = _results(original_entries), _results(original_entries, ("train",))
        if results or not trained:
            verdict = compare(results, _results(migrated_entries), rtol)
        else:  # a train-only program
            verdict = compare_trained(trained, _results(migrated_entries, ("train",)), rtol)
        verdict.notes = list(dict.fromkeys(e["text"] for e in original_entries + migrated_entries if e["kind"] == "note")) + verdict.notes
        return verdict


def _fmt(value: Any) -> str:
    return f"{value:.9g}" if isinstance(value, float) else str(value)


def table(verdict: Verdict, rtol: float) -> list[str]:
    """The human report: one line per compared value, then the closing line."""
    lines = [f"{'result':<7} {'key':<32} {'original':>16} {'migrated':>16} {'rel diff':>10}  verdict"]
    for row in verdict.rows:
        rel = "" if row.rel is None else f"{row.rel:.2e}"
        word = "ok" if row.ok else "DIFFERS"
        lines.append(f"{row.result:<7} {row.key[:32]:<32} {_fmt(row.original):>16} {_fmt(row.migrated):>16} {rel:>10}  {word}")
    lines += [f"note: {note}" for note in verdict.notes]
    lines += [f"problem: {problem}" for problem in verdict.problems]
    differing = sum(not row.ok for row in verdict.rows)
    if verdict.ok:
        lines.append(f"tfmigrate verify: equivalent: {len(verdict.rows)} values agree within rtol={rtol:g}")
    else:
        lines.append(
            f"tfmigrate verify: NOT equivalent: {differing} of {len(verdict.rows)} values differ beyond rtol={rtol:g}"
            + (f", {len(verdict.problems)} problems" if verdict.problems else "")
        )
    return lines


def as_json(verdict: Verdict, rtol: float) -> str:
    return json.dumps(
        {
            "equivalent": verdict.ok,
            "rtol": rtol,
            "problems": verdict.problems,
            "notes": verdict.notes,
            "values": [row.__dict__ for row in verdict.rows],
        },
        indent=2,
    )
