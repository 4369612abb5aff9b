"""The real-program lane: published TF1 programs on the oracle vs their migrations on current TF.

For each program (`PROGRAMS`), with the tiny inputs of `inputs.py`:

1. *first run* — the original on the oracle (through `tf1_launcher.py`), training from a random
   start; kept only for its `model.ckpt-0`, which holds every variable the model has (the
   classifier/SQuAD output layers included) at its initial value.
2. *reference run* — the original again, in a fresh output_dir, with `--init_checkpoint=` that
   checkpoint: the program's own `get_assignment_map_from_checkpoint` maps every trainable
   variable (checked: each is logged `*INIT_FROM_CKPT*`), so nothing starts random. Its results:
   every key of the `eval_results.txt` it writes, or for SQuAD the n-best start/end logits and
   probabilities in `nbest_predictions.json` (texts part of the keys).
3. *migrated run* — `tfmigrate <dir>` (and `--target ctl`) on a copy of the whole unpacked
   package, then the migrated program on current TensorFlow with the same flags and the same
   checkpoint; its results must equal the reference's within 1e-5 relative.

Determinism. The reference run must be a function of its inputs, or no migration could match
it. Three things in these programs are random and are neutralized from the outside, never by
touching the program: the model's dropout (the configs set every dropout probability to 0); the
unseeded `Dataset.shuffle` of the training input (each training set holds one example, see
`inputs.py`); and BERT/ALBERT's `run_classifier`, which apply a hard-coded
`tf.nn.dropout(output_layer, keep_prob=0.9)` to the pooled output when training, an unseeded mask
no config turns off. Two TF 2.15 runs of the same classifier from the same checkpoint disagree
after four steps at any non-zero learning rate (measured: BERT's eval_loss 6.83 vs 8.04, ALBERT's
2.0207 vs 2.0754), so the classifiers train at `--learning_rate=0.0`: the training loop, the
optimizer's slots, the checkpoint save and the evaluation's restore all run, but the weights keep
their starting values. The pretraining and SQuAD programs train at a real learning rate (SQuAD's
chosen so that Adam's amplification of rounding noise stays far below the tolerance, see
`SQUAD_LEARNING_RATE`). BERT's
hand-written global-step increment races the learning rate's read of the step; the runs get
`TF_NUM_INTEROP_THREADS=1` (as tests/equivalence's BERT fixtures do) to keep the original
repeatable. The first run's random start is seeded from the outside too (`SEED`, through the
launcher's `TF1_LAUNCHER_SEED`): unseeded, each session drew a new model.ckpt-0, and the SQuAD
logits' distance from the oracle depends on that start (1e-6 to 1.2e-4 relative seen, on logits
near 1e-3), so a session could fail where the one before passed. Seeded, two oracle runs and
three migrated runs each agree bit for bit, and the migrations differ from the oracle by at most
1.9e-6 (ALBERT) and 6.1e-6 (BERT) relative. On another CPU (an AMD EPYC VM) ALBERT's SQuAD logits
near 0.007 differed by the same 9e-8, 1.4e-5 relative: logits are compared at the scale of the
n-best lists' largest logit (`comparison_scales`), losses and metrics each at its own size.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from equivalence import forked
from equivalence.oracle import oracle_python, quiet_env

from . import inputs
from .packages import package_dir

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "tf1_launcher.py"
ALBERT_MAIN = HERE / "albert_main.py"
TRAIN_STEPS = 4  # each program trains this many steps (batch 4, one example: see inputs.py)
BATCH = 4
TIMEOUT = 600
SEED = 20260101  # the graph-level seed of the oracle runs: the first run's random start is the same every session


@dataclass
class Inputs:
    """The generated inputs of one session (see inputs.py)."""

    root: Path
    vocab: Path
    mrpc: Path
    squad_train: Path
    squad_predict: Path
    corpus: Path
    spm_model: Path
    bert_config: Path
    albert_config: Path
    _pretraining: Path | None = field(default=None, repr=False)

    @classmethod
    def make(cls, root: Path) -> "Inputs":
        root.mkdir(parents=True, exist_ok=True)
        vocab = inputs.write_vocab(root / "vocab.txt")
        corpus = inputs.write_corpus(root / "corpus.txt")
        squad_train, squad_predict = inputs.write_squad(root / "squad")
        spm_model = inputs.train_sentencepiece(corpus, root / "spm")
        size = max(inputs.vocab_size(vocab), inputs.sentencepiece_size(spm_model))
        return cls(
            root=root,
            vocab=vocab,
            mrpc=inputs.write_mrpc(root / "mrpc"),
            squad_train=squad_train,
            squad_predict=squad_predict,
            corpus=corpus,
            spm_model=spm_model,
            bert_config=inputs.write_bert_config(root / "bert_config.json", inputs.vocab_size(vocab)),
            albert_config=inputs.write_albert_config(root / "albert_config.json", size),
        )

    def pretraining_data(self) -> Path:
        """One pretraining TFRecord, from BERT's own `create_pretraining_data` run on the oracle."""
        if self._pretraining is None:
            full, one = self.root / "pretraining-all.tfrecord", self.root / "pretraining.tfrecord"
            script = package_dir("bert") / "create_pretraining_data.py"
            run = run_original(
                [str(script), f"--input_file={self.corpus}", f"--output_file={full}", f"--vocab_file={self.vocab}",
                 "--do_lower_case=true", "--max_seq_length=32", "--max_predictions_per_seq=5",
                 "--masked_lm_prob=0.15", "--random_seed=12345", "--dupe_factor=1"],
                package="bert", cwd=self.root,
            )
            run.check("create_pretraining_data")
            if len(inputs.tfrecords(full)) < 2:
                raise AssertionError(f"create_pretraining_data wrote {len(inputs.tfrecords(full))} instances")
            self._pretraining = inputs.single_record(full, one)
        return self._pretraining


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    def check(self, what: str) -> "Run":
        if self.returncode != 0:
            raise AssertionError(f"{what} failed (exit {self.returncode}):\n{tail(self.stderr)}")
        return self


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _env(package_parent: Path) -> dict[str, str]:
    env = quiet_env()
    env["TF_NUM_INTEROP_THREADS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(package_parent), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _run(argv: list[str], package_parent: Path, cwd: Path, *, code: str | None = None, **env: str) -> Run:
    """`argv` (an interpreter, a script, its flags), forked from that interpreter's server
    (equivalence/forked.py); with `code`, `python -c code <script and flags>`."""
    proc = forked.run(argv[0], argv[1:], cwd, {**_env(package_parent), **env}, TIMEOUT, code=code)
    return Run(argv, proc.returncode, proc.stdout, proc.stderr)


@functools.cache
def _oracle() -> Path:
    """`oracle_python()`, once a process: each call probes the venv with a TensorFlow import (seconds)."""
    return oracle_python()


def run_original(args: list[str], *, package: str, cwd: Path, code: str | None = None, **env: str) -> Run:
    """`args` (a script and its flags) on the oracle, through the TF1 launcher, `env` added (`code`: `_run`'s)."""
    return _run([str(_oracle()), str(LAUNCHER), *args], package_dir(package).parent, cwd, code=code,
                TF1_LAUNCHER_SEED=str(SEED), **env)


def run_current(args: list[str], *, package_parent: Path, cwd: Path, code: str | None = None, **env: str) -> Run:
    """`args` (a script and its flags) on current TensorFlow (this interpreter), `env` added (`code`: `_run`'s)."""
    return _run([sys.executable, *args], package_parent, cwd, code=code, **env)


# --- the programs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    package: str
    module: str
    kind: str  # "classifier" | "pretraining" | "squad"
    flags: Callable[[Inputs, Path, int], list[str]]  # (inputs, output_dir, train steps) -> the flags but do_*/init_checkpoint/output_dir

    @property
    def id(self) -> str:
        return f"{self.package}/{self.module}"

    def entry(self, package_root: Path) -> list[str]:
        """The script (and module) to run, for the package unpacked (or migrated) at `package_root`."""
        if self.package == "albert":  # modules without an entry point: see albert_main.py
            return [str(ALBERT_MAIN), f"albert.{self.module}"]
        return [str(package_root / f"{self.module}.py")]

    def run_flags(self, data: Inputs, output_dir: Path, *, init_checkpoint: Path | None, evaluate: bool,
                  steps: int = TRAIN_STEPS) -> list[str]:
        do_eval = "do_predict" if self.kind == "squad" else "do_eval"
        flags = [*self.flags(data, output_dir, steps), f"--output_dir={output_dir}", "--do_train=true",
                 f"--{do_eval}={str(evaluate).lower()}"]
        if init_checkpoint is not None:
            flags.append(f"--init_checkpoint={init_checkpoint}")
        elif self.package == "albert":
            flags.append("--init_checkpoint=None")
        return flags


_COMMON = ["--save_checkpoints_steps=100000", "--iterations_per_loop=2", "--use_tpu=false"]


def on_tpu_code_path(flags: list[str], cores: int) -> list[str]:
    """`flags` with `--use_tpu=true` and `--num_tpu_cores=<cores>` (the programs' TPU code path:
    CrossShardOptimizer, one-hot embeddings, per-core batches, the scaffold_fn restore)."""
    kept = [f for f in flags if not f.startswith(("--use_tpu=", "--num_tpu_cores="))]
    return [*kept, "--use_tpu=true", f"--num_tpu_cores={cores}"]
_ALBERT_TPU = ["--master=None", "--tpu_name=None", "--tpu_zone=None", "--gcp_project=None", "--num_tpu_cores=8"]


def _epochs(steps: int) -> str:
    """One training example, BATCH a batch: `steps` steps is this many epochs."""
    return f"--num_train_epochs={steps * BATCH}"


def _bert_classifier(d: Inputs, out: Path, steps: int) -> list[str]:
    return ["--task_name=MRPC", f"--data_dir={d.mrpc}", f"--vocab_file={d.vocab}", f"--bert_config_file={d.bert_config}",
            "--do_lower_case=true", "--max_seq_length=32", f"--train_batch_size={BATCH}", f"--eval_batch_size={BATCH}",
            _epochs(steps), "--learning_rate=0.0", *_COMMON]


def _albert_classifier(d: Inputs, out: Path, steps: int) -> list[str]:
    return ["--task_name=MRPC", f"--data_dir={d.mrpc}", "--vocab_file=None", f"--spm_model_file={d.spm_model}",
            f"--albert_config_file={d.albert_config}", "--do_lower_case=true", "--max_seq_length=32",
            f"--train_batch_size={BATCH}", f"--eval_batch_size={BATCH}", f"--predict_batch_size={BATCH}", _epochs(steps),
            "--learning_rate=0.0", "--warmup_proportion=0.1", "--use_pooled_output=true", "--do_predict=false",
            *_COMMON, *_ALBERT_TPU]


def _pretraining(d: Inputs, steps: int) -> list[str]:
    return [f"--input_file={d.pretraining_data()}", "--max_seq_length=32", "--max_predictions_per_seq=5",
            f"--train_batch_size={BATCH}", f"--eval_batch_size={BATCH}", f"--num_train_steps={steps}",
            "--num_warmup_steps=1", "--learning_rate=1e-2", "--max_eval_steps=2", *_COMMON]


def _bert_pretraining(d: Inputs, out: Path, steps: int) -> list[str]:
    return [*_pretraining(d, steps), f"--bert_config_file={d.bert_config}"]


def _albert_pretraining(d: Inputs, out: Path, steps: int) -> list[str]:
    return [*_pretraining(d, steps), f"--albert_config_file={d.albert_config}", "--optimizer=lamb", "--poly_power=1.0",
            "--start_warmup_step=0", "--masked_lm_budget=0", "--init_from_group0=false",
            f"--export_dir={out / 'export'}", *_ALBERT_TPU]


# SQuAD's results are logits, some near 0, compared at 1e-5 *relative*; both programs train with
# Adam (epsilon 1e-6), which scales last-bit differences in a gradient (TF 2.15's kernels vs
# 2.21's) up to whole steps. Measured from the same checkpoint (max |oracle - migrated| over the
# n-best logits): at learning rate 1e-2 BERT 2.5e-5 and ALBERT 3.6e-5 relative (failing); at 1e-3
# 9e-8 and 6.4e-7 (ALBERT's logits lie near 0.01, so still up to 8e-5 relative); at 1e-4 at most
# 9e-8, 3e-6 relative over six runs, two of them under load. At lr 0 the migration is bitwise
# the oracle. Training at 1e-4 still moves the logits by 7e-3 to 2e-2 and changes the n-best
# answers, so the comparison covers the training (and it is BERT's own SQuAD rate, to a factor 3).
SQUAD_LEARNING_RATE = 1e-4


def _squad(d: Inputs, steps: int) -> list[str]:
    return [f"--train_file={d.squad_train}", f"--predict_file={d.squad_predict}", "--do_lower_case=true",
            "--max_seq_length=48", "--doc_stride=16", "--max_query_length=12", f"--train_batch_size={BATCH}",
            f"--predict_batch_size={BATCH}", _epochs(steps), f"--learning_rate={SQUAD_LEARNING_RATE}", "--n_best_size=5",
            "--max_answer_length=6", *_COMMON]


def _bert_squad(d: Inputs, out: Path, steps: int) -> list[str]:
    return [*_squad(d, steps), f"--vocab_file={d.vocab}", f"--bert_config_file={d.bert_config}"]


def _albert_squad(d: Inputs, out: Path, steps: int) -> list[str]:
    return [*_squad(d, steps), "--vocab_file=None", f"--spm_model_file={d.spm_model}", f"--albert_config_file={d.albert_config}",
            "--warmup_proportion=0.1", "--null_score_diff_threshold=0.0", "--version_2_with_negative=false",
            f"--train_feature_file={out / 'train.tf_record'}", f"--predict_feature_file={out / 'eval.tf_record'}",
            f"--predict_feature_left_file={out / 'eval_features.pkl'}", *_ALBERT_TPU]


PROGRAMS = [
    Program("bert", "run_classifier", "classifier", _bert_classifier),
    Program("bert", "run_pretraining", "pretraining", _bert_pretraining),
    Program("bert", "run_squad", "squad", _bert_squad),
    Program("albert", "run_classifier", "classifier", _albert_classifier),
    Program("albert", "run_pretraining", "pretraining", _albert_pretraining),
    Program("albert", "run_squad", "squad", _albert_squad),
]


# --- results ----------------------------------------------------------------------------------


def eval_results(path: Path) -> list[dict[str, float]]:
    """The `key = value` lines of an eval_results.txt; a repeated key starts the next evaluation."""
    results: list[dict[str, float]] = [{}]
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(" = ")
        if key in results[-1]:
            results.append({})
        results[-1][key] = float(value)
    return results


def nbest_results(path: Path) -> list[dict[str, float]]:
    """SQuAD's n-best lists as one result: `<question>/<rank> <text>/<field>` -> value."""
    out: dict[str, float] = {}
    for qid, entries in json.loads(path.read_text(encoding="utf-8")).items():
        for rank, entry in enumerate(entries):
            for name in ("start_logit", "end_logit", "probability"):
                out[f"{qid}/{rank} {entry['text']!r}/{name}"] = float(entry[name])
    return [out]


def comparison_scales(program: Program, results: list[dict[str, float]]) -> dict[str, float]:
    """SQuAD's logits are compared at the scale of all of them (the largest |logit| of the
    oracle's n-best lists), not each at its own size: a logit is a dot product whose float32
    rounding is relative to the terms it sums, and some land near 0. Measured: the same absolute
    difference (9e-8) is 3e-6 relative on one CPU's kernels and 1.4e-5 on another's (ALBERT's
    logits near 0.007). Probabilities keep their own size."""
    if program.kind != "squad":
        return {}
    out: dict[str, float] = {}
    for result in results:
        logits = {key: abs(value) for key, value in result.items() if key.endswith(("/start_logit", "/end_logit"))}
        scale = max(logits.values(), default=0.0)
        out.update(dict.fromkeys(logits, scale))
    return out


def results_of(program: Program, output_dir: Path) -> list[dict[str, float]]:
    if program.kind == "squad":
        return nbest_results(output_dir / "nbest_predictions.json")
    return eval_results(output_dir / "eval_results.txt")


_TRAINABLE = re.compile(r"^INFO:tensorflow:  name = (\S+:\d+), shape = \S.*?(, \*INIT_FROM_CKPT\*)?$", re.M)


def trainable_variables(log: str) -> dict[str, bool]:
    """Trainable variable -> restored from the init checkpoint, from the programs' own log lines."""
    return {name: bool(init) for name, init in _TRAINABLE.findall(log)}


# --- the oracle side --------------------------------------------------------------------------


@dataclass
class Reference:
    results: list[dict[str, float]]
    init_checkpoint: Path  # the first run's model.ckpt-0
    train_examples: Path  # the reference run's training input, as the program wrote/read it
    variables: dict[str, bool]


def run_reference(program: Program, data: Inputs, work: Path) -> Reference:
    """The first and the reference run of `program` on the oracle (in `work`)."""
    first, reference = work / "first", work / "reference"
    run_original([*program.entry(package_dir(program.package)),
                  *program.run_flags(data, first, init_checkpoint=None, evaluate=False)],
                 package=program.package, cwd=work).check(f"{program.id} (first run, oracle)")
    checkpoint = first / "model.ckpt-0"
    if not Path(f"{checkpoint}.index").exists():
        raise AssertionError(f"{program.id}'s first run left no model.ckpt-0: {sorted(p.name for p in first.iterdir())}")
    run = run_original([*program.entry(package_dir(program.package)),
                        *program.run_flags(data, reference, init_checkpoint=checkpoint, evaluate=True)],
                       package=program.package, cwd=work).check(f"{program.id} (reference run, oracle)")
    train = {"pretraining": data.pretraining_data() if program.kind == "pretraining" else None,
             "classifier": reference / "train.tf_record", "squad": reference / "train.tf_record"}[program.kind]
    return Reference(results_of(program, reference), checkpoint, train, trainable_variables(run.stderr))


# --- the migration side -----------------------------------------------------------------------


@dataclass
class Migration:
    root: Path  # the directory holding the migrated package
    returncode: int
    output: str

    @property
    def package_parent(self) -> Path:
        return self.root


def migrate(package: str, target: str, work: Path) -> Migration:
    """A copy of the unpacked `package` under `work/<target>/`, migrated in place by `tfmigrate` as one program."""
    root = work / target
    root.mkdir(parents=True)
    shutil.copytree(package_dir(package), root / package)
    tfmigrate = Path(sys.executable).with_name("tfmigrate")
    argv = [str(tfmigrate), *(["--target", target] if target != "keras" else []), package]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=TIMEOUT, env=quiet_env())
    return Migration(root, proc.returncode, proc.stdout + proc.stderr)


def program_files(package_root: Path, module: str) -> list[str]:
    """`module` and the package modules it imports, transitively (`from <package> import x`), by name."""
    package = package_root.name
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen or not (package_root / f"{name}.py").exists():
            continue
        seen.add(name)
        text = (package_root / f"{name}.py").read_text(encoding="utf-8")
        todo += re.findall(rf"^\s*from {package} import (\w+)", text, re.M)
        todo += re.findall(rf"^\s*import {package}\.(\w+)", text, re.M)
    return sorted(f"{name}.py" for name in seen)


def same_migration(program: Program, a: Migration, b: Migration) -> bool:
    """Whether the two migrations of `program` (its module and the modules it imports) are byte-identical."""
    files = program_files(package_dir(program.package), program.module)
    return all((a.root / program.package / f).read_bytes() == (b.root / program.package / f).read_bytes() for f in files)


def run_migrated(program: Program, migration: Migration, data: Inputs, checkpoint: Path, work: Path,
                 **env: str) -> tuple[Run, Path]:
    output_dir = work / "migrated-run"
    run = run_current(migrated_argv(program, migration, data, checkpoint, output_dir),
                      package_parent=migration.package_parent, cwd=work, **env)
    return run, output_dir


def migrated_argv(program: Program, migration: Migration, data: Inputs, checkpoint: Path, output_dir: Path) -> list[str]:
    """The migrated program's script and flags, as the reference ran the original (from `checkpoint`)."""
    return [*program.entry(migration.root / program.package),
            *program.run_flags(data, output_dir, init_checkpoint=checkpoint, evaluate=True)]


class Session:
    """Per-process caches: inputs, each program's oracle reference, each package's migrations."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tfmigrate-real-programs-"))
        self._inputs: Inputs | None = None

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def inputs(self) -> Inputs:
        if self._inputs is None:
            self._inputs = Inputs.make(self.root / "inputs")
        return self._inputs

    @functools.cache
    def reference(self, program: Program) -> Reference:
        work = self.root / "oracle" / program.id.replace("/", "-")
        work.mkdir(parents=True)
        return run_reference(program, self.inputs, work)

    @functools.cache
    def tpu_reference(self, program: Program, shards: int) -> list[dict[str, float]]:
        """The reference run on the TPU code path of `shards` cores each fed the same batch (the
        lane's one training example; tf1_launcher.py's TF1_LAUNCHER_TPU_SHARDS), from the same
        checkpoint: what a TPU of that many cores gives."""
        reference = self.reference(program)
        work = self.root / "oracle-tpu" / f"{program.id.replace('/', '-')}-{shards}"
        output_dir = work / "reference"
        work.mkdir(parents=True)
        flags = program.run_flags(self.inputs, output_dir, init_checkpoint=reference.init_checkpoint, evaluate=True)
        run_original([*program.entry(package_dir(program.package)), *on_tpu_code_path(flags, shards)],
                     package=program.package, cwd=work,
                     TF1_LAUNCHER_TPU_SHARDS=str(shards)).check(f"{program.id} (TPU code path, {shards} shards, oracle)")
        return results_of(program, output_dir)

    @functools.cache
    def migration(self, package: str, target: str) -> Migration:
        return migrate(package, target, self.root / "migrated" / package)

    @functools.cache
    def migrated(self, program: Program, target: str, tier: str = "strategy") -> tuple[Run, Path]:
        """The migrated program's run; `tier` is TFMIGRATE_MODEL_FN_TIER, where a model_fn stays."""
        work = self.root / "runs" / f"{target}-{tier}" / program.id.replace("/", "-")
        work.mkdir(parents=True)
        return run_migrated(program, self.migration(program.package, target), self.inputs,
                            self.reference(program).init_checkpoint, work, TFMIGRATE_MODEL_FN_TIER=tier)
