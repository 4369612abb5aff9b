"""`tfmigrate verify`: the original on the oracle, its migration here, compared key by key."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES

pytestmark = [pytest.mark.tf, pytest.mark.oracle, pytest.mark.xdist_group("verify")]

PROGRAM = FIXTURES / "TFM201_estimator_to_keras" / "inline_metric_dict_squeezed_output.in.py"
TFMIGRATE = [sys.executable, "-c", "from tfmigrate.cli import entry; entry()"]


def _verify(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*TFMIGRATE, "verify", *args], cwd=cwd, capture_output=True, text=True, timeout=900)


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    directory = tmp_path / "prog"
    directory.mkdir()
    target = directory / "trainer.py"
    # Default (random) initial weights: only the seeded first checkpoint makes the runs comparable.
    source = PROGRAM.read_text(encoding="utf-8")
    source = source.replace(", kernel_initializer=tf.constant_initializer(0.1)", "")
    target.write_text(source.replace(", kernel_initializer=tf.constant_initializer(0.2)", ""), encoding="utf-8")
    return target


def test_a_migration_that_agrees_exits_0_with_a_table(program: Path) -> None:
    proc = _verify("trainer.py", cwd=program.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["result", "key", "original"]
    assert any(line.split()[:2] == ["0", "loss"] and line.endswith("ok") for line in lines)
    assert any(line.split()[:2] == ["2", "value"] for line in lines)  # the predictions are compared too
    assert lines[-1].startswith("tfmigrate verify: equivalent: 9 values agree")


def test_a_model_dir_outside_the_program_is_one_per_run_and_left_alone(program: Path, tmp_path: Path) -> None:
    """A program that trains into an absolute model_dir (`/tmp/mnist_model`): each run keeps its
    own copy of it under verify's work directory (else the migration continues from the original's
    checkpoints there), the report notes it, and the directory itself, with what the user keeps
    in it, is untouched."""
    shared = tmp_path / "users-models" / "squeezed"
    shared.mkdir(parents=True)
    (shared / "notes.txt").write_text("mine\n", encoding="utf-8")
    program.write_text(program.read_text(encoding="utf-8").replace("model_dir='squeezed'", f"model_dir={str(shared)!r}"), encoding="utf-8")
    proc = _verify("trainer.py", "--json", cwd=program.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["equivalent"] is True
    assert report["notes"] == [f"model_dir {shared} lies outside the program's directory: each run used one of its own"]
    assert [path.name for path in shared.iterdir()] == ["notes.txt"]


def test_ctl_target_and_json(program: Path) -> None:
    proc = _verify("trainer.py", "--target", "ctl", "--json", cwd=program.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["equivalent"] is True and report["rtol"] == 1e-5
    assert {row["key"] for row in report["values"]} == {"global_step", "loss", "rmse", "value"}


def test_an_altered_migration_exits_1_naming_the_key(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "migrated"
    subprocess.run([*TFMIGRATE, str(program.parent), "--out-dir", str(out), "-q"], check=False, capture_output=True)
    migrated = out / "trainer.py"
    text = migrated.read_text(encoding="utf-8")
    assert "tfm.optimizers.Adam(learning_rate=0.01)" in text
    migrated.write_text(text.replace("learning_rate=0.01", "learning_rate=0.02"), encoding="utf-8")
    proc = _verify(str(program), str(migrated), "--logdir", str(tmp_path / "logs"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert any(line.split()[:2] == ["0", "loss"] and line.endswith("DIFFERS") for line in proc.stdout.splitlines())
    assert "NOT equivalent" in proc.stdout.splitlines()[-1]
    # Both runs' evaluations, as TensorBoard runs side by side.
    assert list((tmp_path / "logs" / "original").glob("events.out.tfevents.*"))
    assert list((tmp_path / "logs" / "migrated").glob("events.out.tfevents.*"))


def test_a_crashing_program_exits_2_with_its_last_lines(tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import tensorflow.compat.v1 as tf\nraise SystemExit('the data directory is missing')\n", encoding="utf-8")
    proc = _verify("crash.py", str(crash), cwd=tmp_path)
    assert proc.returncode == 2
    assert "crash.py failed under" in proc.stderr and "the data directory is missing" in proc.stderr


def test_program_arguments_after_double_dash(tmp_path: Path) -> None:
    program = tmp_path / "args.py"
    shutil.copy(PROGRAM, program)
    text = program.read_text(encoding="utf-8").replace(
        "def main():\n", "def main():\n  import sys\n  assert sys.argv[1:] == ['--steps', '5'], sys.argv\n"
    )
    program.write_text(text, encoding="utf-8")
    proc = _verify("args.py", "--", "--steps", "5", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


SLIM_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "slim_tpu_cnn.py"


def test_a_tf1_slim_program_runs_hosted_on_tf_slim_with_the_oracles_numbers(tmp_path: Path) -> None:
    """A TF 1.x TPUEstimator whose model_fn is `tf.contrib.slim` code (arg_scope, conv/pool/fully
    connected layers, `contrib.layers.l2_regularizer`): hosted, its slim spelled `tfm.legacy.slim`
    (tf-slim), no TODO left, and evaluate and every prediction equal to TF 1.x's on the oracle.
    TF 2.15's TPUEstimator.evaluate/predict call Estimator's, also recorded: each is counted once."""
    shutil.copy(SLIM_PROGRAM, tmp_path / "trainer.py")
    migrated = tmp_path / "migrated"
    run = subprocess.run([*TFMIGRATE, str(tmp_path / "trainer.py"), "--out-dir", str(migrated)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert "estimators: 1 strategy" in run.stdout and "0 TODOs" in run.stdout, run.stdout + run.stderr
    text = (migrated / "trainer.py").read_text(encoding="utf-8")
    assert "tfm.legacy.slim.arg_scope([tfm.legacy.slim.conv2d, tfm.legacy.slim.fully_connected]" in text
    assert "tfm.legacy.slim.l2_regularizer(1e-3)" in text and "contrib" not in text.split('"""', 2)[2]
    proc = _verify("trainer.py", str(migrated / "trainer.py"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 15 values agree within rtol=1e-05"


OPTIMIZE_LOSS_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "optimize_loss_estimator.py"


def test_a_tf1_program_training_with_contrib_optimize_loss_runs_hosted_with_the_oracles_numbers(tmp_path: Path) -> None:
    """`tf.contrib.layers.optimize_loss` (by name with decay, clipping and summaries; through
    `from tensorflow.contrib import layers` with an optimizer instance) is spelled
    `tfm.legacy.optimizers.optimize_loss` (TF 1.15's, as tf-slim keeps it): no TODO left, the
    contrib import gone, and training, evaluation and predictions equal to TF 1.x's on the oracle."""
    code, proc = _migrated_and_verified(OPTIMIZE_LOSS_PROGRAM, tmp_path, "estimators: 2 strategy")
    assert code.count("tfm.legacy.optimizers.optimize_loss(") == 2 and "contrib" not in code
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 11 values agree within rtol=1e-05"


CREATE_TRAIN_OP_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "create_train_op_estimator.py"


def test_a_tf1_program_training_with_contrib_training_create_train_op_runs_with_the_oracles_numbers(tmp_path: Path) -> None:
    """`tf.contrib.training.create_train_op` (its loss tensor as the train_op, after UPDATE_OPS;
    gradients clipped through `clip_gradient_norms_fn`; a chosen `variables_to_train`) is tf-slim's
    (`tfm.legacy.slim.training`, TF 1.15's code), `contrib.framework.is_tensor` is `tf.is_tensor`:
    no TODO or contrib left, and on the strategy tier training, evaluation and predictions equal
    TF 1.x's on the oracle (whose contrib stand-in reaches the same tf-slim code)."""
    code, proc = _migrated_and_verified(CREATE_TRAIN_OP_PROGRAM, tmp_path, "estimators: 2 strategy")
    statements = "\n".join(line for line in code.splitlines() if not line.strip().startswith("#"))  # (notes quote the original)
    assert code.count("tfm.legacy.slim.training.create_train_op(") == 2 and "contrib" not in statements
    assert "tf.is_tensor(loss)" in code
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 11 values agree within rtol=1e-05"


NUMPY_INPUT_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "numpy_input_fn_estimator.py"


def test_a_tf1_program_fed_by_numpy_input_fn_unpacking_its_tensors_runs_with_the_oracles_numbers(tmp_path: Path) -> None:
    """`tf.estimator.inputs.numpy_input_fn`'s input_fn returns tensors, as TF 1.x's did: a program's
    own input_fn unpacks, indexes and transforms them (it crashed on the dataset the runtime's
    returned, reported migrated fully), and an estimator given it directly, a single array for
    predictions included, reads its dataset. On the strategy tier: the oracle's numbers."""
    code, proc = _migrated_and_verified(NUMPY_INPUT_PROGRAM, tmp_path, "estimators: 1 strategy")
    assert code.count("tfm.estimator.inputs.numpy_input_fn(") == 4
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 11 values agree within rtol=1e-05"


PANDAS_INPUT_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "pandas_input_fn_estimators.py"


def test_a_tf1_program_fed_by_pandas_input_fn_runs_with_the_oracles_numbers(tmp_path: Path) -> None:
    """`tf.estimator.inputs.pandas_input_fn` (no TF2 home: it was a TODO) is `tfm.estimator`'s: a
    canned LinearClassifier over a DataFrame's numeric and string columns, and an Estimator whose
    targets are a DataFrame's columns, fed by an input_fn that extends the tensors it returns, train,
    evaluate and predict to TF 1.x's numbers on the oracle."""
    code, proc = _migrated_and_verified(PANDAS_INPUT_PROGRAM, tmp_path, "estimators: 2 idiomatic")
    assert code.count("tfm.estimator.inputs.pandas_input_fn(") == 4
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 44 values agree within rtol=1e-05"


TENSOR_INPUT_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "tensor_input_fns.py"

# Runs a migrated program with every Session refused: the graph tier (and `input_fn_data`'s
# Session reader) then fail it.
_NO_SESSION = """
import runpy, sys
from tensorflow.python.client import session
def refused(*args, **kwargs):
    raise AssertionError("a Session was opened")
session.BaseSession.__init__ = refused
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_tf1_program_whose_input_fns_return_tensors_runs_in_tf2_with_the_oracles_numbers(tmp_path: Path) -> None:
    """Input_fns returning constants and fake data drawn by random ops (no dataset) ran every call
    in graph mode: each now is a dataset whose elements run those ops again, as TF 1.x's steps
    did, on the Keras tier and the strategy tier (a TPUEstimator's `params['batch_size']` fake
    data too), drawing TF 1.x's numbers, and no Session is opened. A model_fn the TPU model_fn
    calls is kept as written, its Estimator on the strategy tier."""
    code, proc = _migrated_and_verified(TENSOR_INPUT_PROGRAM, tmp_path, "estimators: 1 idiomatic, 2 strategy")
    assert "def shared_model_fn(features, labels, mode):" in code and "class RegressionModel(tf.keras.Model)" in code
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 10 values agree within rtol=1e-05"
    run = subprocess.run([sys.executable, "-c", _NO_SESSION, "trainer.py"], cwd=tmp_path / "migrated",
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and "runs in graph mode" not in run.stderr, run.stderr[-3000:]


TRAIN_ONLY_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "train_only_numpy_data.py"


def test_a_train_only_tf1_program_drawing_its_data_with_numpy_is_compared_by_its_checkpoints(tmp_path: Path) -> None:
    """A program that only trains recorded nothing to compare: its checkpoints after each `train`
    are compared, variable by variable (weights, RMSProp's slots, the global step). Its input_fn
    draws its data with `np.random`, unseeded: verify seeds NumPy on both sides, and the strategy
    tier calls the input_fn from the NumPy state TF 1.x called it with (it called it again after
    the graph-mode build, which had drawn: other data, other weights)."""
    _, proc = _migrated_and_verified(TRAIN_ONLY_PROGRAM, tmp_path, "estimators: 1 strategy")
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 146 values agree within rtol=1e-05"
    assert "the checkpoints its train calls left are compared" in proc.stdout
    for key in ("dense/kernel/RMSProp.sum", "dense_1/bias[0]", "global_step[0]"):
        assert f"\n1       {key} " in proc.stdout


NUMPY_RANDOM_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "numpy_random_input_fn.py"


@pytest.mark.parametrize("target", ["keras", "ctl"])
def test_an_input_fn_drawing_its_data_with_numpy_trains_on_tf1s_draws(tmp_path: Path, target: str) -> None:
    """The Keras and custom-loop tiers called the input_fn once more to build the model, which drew
    the next `np.random` data: the migration trained and evaluated on other data ("migrated
    fully", other numbers), and one returning tensors was called twice more to read them. Those
    calls now put NumPy's and Python's random states back, or start from TF 1.x's call's."""
    shutil.copy(NUMPY_RANDOM_PROGRAM, tmp_path / "trainer.py")
    proc = _verify("--target", target, "trainer.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 9 values agree within rtol=1e-05"


def _migrated_and_verified(program: Path, tmp_path: Path, summary: str) -> tuple[str, subprocess.CompletedProcess]:
    """`program` migrated with no TODO (the summary line saying `summary`), and `tfmigrate verify`
    of it against the original, which must pass: (the migrated code after its docstring, verify)."""
    shutil.copy(program, tmp_path / "trainer.py")
    migrated = tmp_path / "migrated"
    run = subprocess.run([*TFMIGRATE, str(tmp_path / "trainer.py"), "--out-dir", str(migrated)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert summary in run.stdout and "0 TODOs" in run.stdout, run.stdout + run.stderr
    code = (migrated / "trainer.py").read_text(encoding="utf-8").split('"""', 2)[2]
    proc = _verify("trainer.py", str(migrated / "trainer.py"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return code, proc


CONTRIB_METRICS_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "contrib_metrics_estimator.py"


def test_a_tf1_program_evaluating_with_contrib_metrics_runs_hosted_with_the_oracles_numbers(tmp_path: Path) -> None:
    """`tf.contrib.metrics` (the module under an alias, the chain, a name imported from it) is
    tf-slim's `metrics` (`tfm.legacy.slim.metrics`): no TODO or contrib import left, and the
    streaming metrics (`streaming_concat`'s variable assigned in a branch included) evaluate to
    TF 1.x's numbers on the oracle."""
    code, proc = _migrated_and_verified(CONTRIB_METRICS_PROGRAM, tmp_path, "estimators: 1 strategy")
    assert code.count("tfm.legacy.slim.metrics.streaming_") == 6 and "contrib" not in code
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 10 values agree within rtol=1e-05"
    for key in ("pearson", "gathered_gap", "rmse", "auc", "covariance"):
        assert f"\n0       {key} " in proc.stdout


HOST_CALL_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "host_call_summaries.py"
LAUNCHER = Path(__file__).parent / "real_programs" / "tf1_launcher.py"


CRF_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "crf_tagger_estimator.py"


def test_a_tf1_crf_tagger_runs_hosted_with_the_oracles_numbers(tmp_path: Path) -> None:
    """`tf.contrib.crf` (the loss of a sequence tagger, its `transitions` made by the CRF, and
    Viterbi decoding) is `tfm.legacy.crf`: the hosted tagger trains, evaluates and predicts to TF
    1.x's numbers on the oracle, where the contrib stand-in reaches TF 1.15's CRF in TensorFlow Addons."""
    code, proc = _migrated_and_verified(CRF_PROGRAM, tmp_path, "estimators: 1 strategy")
    assert code.count("tfm.legacy.crf.crf_") == 3 and "contrib" not in code
    assert proc.stdout.splitlines()[-1].startswith("tfmigrate verify: equivalent: ")
    for key in ("accuracy", "best_score", "loss"):
        assert f"\n0       {key} " in proc.stdout


def _migrated_with_no_todo(program: Path, tmp_path: Path, summary: str = "") -> tuple[Path, Path, str]:
    """`program` as `original/trainer.py`, migrated into `migrated/` with no TODO left (the summary
    saying `summary`): (original directory, migrated directory, the migrated trainer's text)."""
    original, migrated = tmp_path / "original", tmp_path / "migrated"
    original.mkdir()
    shutil.copy(program, original / "trainer.py")
    run = subprocess.run([*TFMIGRATE, str(original / "trainer.py"), "--out-dir", str(migrated)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert summary in run.stdout and "(0 TODOs left)" in run.stdout, run.stdout + run.stderr
    return original, migrated, (migrated / "trainer.py").read_text(encoding="utf-8")


KERAS_ESTIMATOR = Path(__file__).parent / "data" / "tf1_programs" / "keras_layers_estimator.py"
KERAS_SESSION = Path(__file__).parent / "data" / "tf1_programs" / "keras_session_program.py"


def test_a_tf1_model_fn_of_keras_layers_runs_hosted_with_the_oracles_numbers(tmp_path: Path) -> None:
    """A hosted model_fn of `tf.keras` layers (a Sequential with an input shape, layers imported by
    name, batch norm and an unseeded dropout) runs TF 1.x's Keras (`tfm.legacy.keras`, TFM105): TF
    1.x's checkpoint restores into it and verify finds every value equal; and from a fresh start
    (no checkpoint shared) it trains to the oracle's numbers too."""
    code, proc = _migrated_and_verified(KERAS_ESTIMATOR, tmp_path, "estimators: 1 strategy")
    assert code.count("tfm.legacy.keras.layers.") == 7 and "tf.keras" not in code and "tensorflow.keras" not in code
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 14 values agree within rtol=1e-05"
    (tmp_path / "fresh").mkdir()
    original, migrated, _ = _migrated_hosted(KERAS_ESTIMATOR, tmp_path / "fresh")
    _oracle_and_migrated_agree(original, migrated, 2)


KERAS_MODEL_MODULE = Path(__file__).parent / "data" / "tf1_programs" / "keras_model_module"


def test_a_tpu_trainer_over_another_modules_keras_model_runs_hosted_with_the_oracles_numbers(tmp_path: Path) -> None:
    """A TPUEstimator trainer whose model_fn calls `digits.create_model()` (a Keras Sequential with
    dropout, made by a module whose own estimator is hosted): the call is not made into a Keras
    model's step (its variables would be made each step), so the trainer is hosted too, both
    modules run TF 1.x's Keras, and the TPU device loop (4 iterations a run) names the model's
    variables as one step does: the oracle's numbers from a fresh start."""
    original, migrated = tmp_path / "original", tmp_path / "migrated"
    shutil.copytree(KERAS_MODEL_MODULE, original)
    run = subprocess.run([*TFMIGRATE, str(original), "--out-dir", str(migrated)], capture_output=True, text=True, cwd=tmp_path)
    assert "estimators: 2 strategy" in run.stdout and "(0 TODOs left)" in run.stdout, run.stdout + run.stderr
    assert "`digits.create_model(...)` makes what the forward pass calls" in (migrated / "tpu_trainer.py").read_text(encoding="utf-8")
    assert "tfm.legacy.keras.Sequential(" in (migrated / "digits.py").read_text(encoding="utf-8")
    _oracle_and_migrated_agree(original, migrated, 2, "tpu_trainer.py")


KERAS_MODULE_ALONE = Path(__file__).parent / "data" / "tf1_programs" / "keras_module_alone"


def test_a_module_of_keras_code_alone_built_by_a_hosted_model_fn_runs_tf1s_keras_with_the_oracles_numbers(tmp_path: Path) -> None:
    """A model module with no estimator of its own (`nets.build_net`, a Sequential over
    `params['hidden_units']`) that the hosted trainer's model_fn builds: the run over the program
    gives it TF 1.x's Keras too, and two fresh runs give the oracle's numbers (on Keras 3 the model
    ran inside the TF1 graph, its initializers drawn otherwise: a loss of 1.094 for 1.124)."""
    original, migrated = tmp_path / "original", tmp_path / "migrated"
    shutil.copytree(KERAS_MODULE_ALONE, original)
    run = subprocess.run([*TFMIGRATE, str(original), "--out-dir", str(migrated)], capture_output=True, text=True, cwd=tmp_path)
    assert "estimators: 1 strategy" in run.stdout and "(0 TODOs left)" in run.stdout, run.stdout + run.stderr
    nets = (migrated / "nets.py").read_text(encoding="utf-8")
    assert nets.count("tfm.legacy.keras.") == 3 and "tf.keras" not in nets
    _oracle_and_migrated_agree(original, migrated, 2)


RESUME_SCHEDULE = Path(__file__).parent / "data" / "tf1_programs" / "resume_schedule.py"


def test_a_tpu_trainer_resuming_its_schedule_from_the_last_checkpoint_verifies_and_resumes(tmp_path: Path) -> None:
    """The TPU reference models' main loop: the global step of the model_dir's last checkpoint,
    read with `estimator._load_global_step_from_checkpoint_dir` from `tensorflow.python.estimator`,
    then train to the next evaluation step and evaluate. The helper is `tfm.estimator`'s: the Keras
    tier's migration verifies equal, and run again in its directory it finds its last step, as
    the original does (nothing trained or evaluated the second time)."""
    from equivalence.oracle import quiet_env

    code, _ = _migrated_and_verified(RESUME_SCHEDULE, tmp_path, "estimators: 1 idiomatic")
    assert "tfm.estimator._load_global_step_from_checkpoint_dir('resume_model')" in code and "tensorflow.python" not in code
    for evaluations in (2, 0):
        done = subprocess.run([sys.executable, "trainer.py"], cwd=tmp_path / "migrated", capture_output=True, text=True,
                              env=quiet_env(), timeout=600)
        assert done.returncode == 0 and done.stdout.count("eval_results") == evaluations, done.stdout + done.stderr[-3000:]


CANNED_TF1_OPTIMIZERS = Path(__file__).parent / "data" / "tf1_programs" / "canned_tf1_optimizer_objects.py"


def test_canned_estimators_given_tf1_optimizer_objects_train_to_the_oracles_numbers(tmp_path: Path) -> None:
    """`optimizer=my_optimizer`, a TF1 optimizer object made beforehand (GradientDescent, Adagrad,
    Adam, Momentum with Nesterov, RMSProp with momentum, Ftrl; non-default settings): the canned
    estimator's Keras model takes the Keras optimizer that updates the same way (before, the
    runtime refused the object), and each regressor evaluates to the oracle's numbers."""
    original, migrated, _ = _migrated_with_no_todo(CANNED_TF1_OPTIMIZERS, tmp_path)
    _oracle_and_migrated_agree(original, migrated, 6)


KERAS_BATCH_NORM = Path(__file__).parent / "data" / "tf1_programs" / "keras_batch_norm_estimator.py"


def test_a_tf1_keras_batch_norm_in_a_migrated_model_fn_keeps_tf1s_frozen_statistics(tmp_path: Path) -> None:
    """`tf.keras.layers.BatchNormalization` in a TF 1.x model_fn that the Keras tier migrates: TF
    1.x never ran its moving-statistics updates (Keras 2 kept them out of UPDATE_OPS), so the
    migration's batch norm is the runtime's with `update_moving_statistics=False`, and evaluation
    gives the oracle's numbers (Keras 3's own layer would move them)."""
    code, proc = _migrated_and_verified(KERAS_BATCH_NORM, tmp_path, "estimators: 1 idiomatic")
    assert "tfm.layers.BatchNormalization(update_moving_statistics=False)" in code
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 3 values agree within rtol=1e-05"


def test_a_tf1_session_program_over_keras_layers_keeps_graph_mode_and_the_oracles_numbers(tmp_path: Path) -> None:
    """Placeholders fed through Keras layers in a `tf.Session`, the graph seeded as the module is
    imported: TF 1.x's Keras in TF1 graph mode, switched on before the seed, gives TF 1.x's losses."""
    original, migrated, code = _migrated_with_no_todo(KERAS_SESSION, tmp_path)
    assert "tf.compat.v1.disable_v2_behavior()\n\ntf.compat.v1.set_random_seed(1)" in code
    assert code.count("tfm.legacy.keras.layers.") == 3
    _oracle_and_migrated_agree(original, migrated, 2)


def _migrated_hosted(program: Path, tmp_path: Path, tier: str = "strategy") -> tuple[Path, Path, str]:
    """`program` migrated (`_migrated_with_no_todo`): one estimator, hosted, reported on `tier`."""
    return _migrated_with_no_todo(program, tmp_path, f"estimators: 1 {tier}")


def _scalars(model_dir: Path) -> list[tuple[str, int, float]]:
    """(tag, step, value) of every scalar the host_call wrote (a simple value or a scalar tensor)."""
    import tensorflow as tf

    found = []
    for path in sorted(model_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag in ("loss", "learning_rate"):
                    number = value.simple_value if value.HasField("simple_value") else tf.make_ndarray(value.tensor)
                    found.append((value.tag, event.step, float(number)))
    return sorted(found)


def test_a_tf1_host_call_with_contrib_summary_writes_the_oracles_scalars(tmp_path: Path) -> None:
    """TPU programs' `host_call` writing `tf.contrib.summary` scalars: `tfm.legacy.contrib_summary`,
    hosted, the same evaluation and the same (tag, step, value) per training step as TF 1.x."""
    from equivalence.oracle import oracle_python, quiet_env

    original, migrated, text = _migrated_hosted(HOST_CALL_PROGRAM, tmp_path)
    assert "tfm.legacy.contrib_summary.scalar('loss', loss[0], step=gs)" in text
    assert "from tensorflow.contrib" not in text.split('"""', 2)[2]
    proc = _verify("trainer.py", str(migrated / "trainer.py"), cwd=original)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for python, program, cwd in ((oracle_python(), [str(LAUNCHER), "trainer.py"], original),
                                 (sys.executable, ["trainer.py"], migrated)):
        done = subprocess.run([str(python), *program], cwd=cwd, capture_output=True, text=True, env=quiet_env(), timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    want, got = _scalars(original / "host_call_model"), _scalars(migrated / "host_call_model")
    assert [(tag, step) for tag, step, _ in want] == [(tag, step) for tag, step, _ in got]
    assert len(want) == 24  # loss and learning rate at each of the 12 steps
    assert all(abs(a[2] - b[2]) <= 1e-5 * max(abs(a[2]), 1e-6) for a, b in zip(want, got)), [(a, b) for a, b in zip(want, got) if a != b]


GRAPH_SEEDED_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "graph_seeded_draws.py"


def _eval_results(python: Path | str, program: list[str], cwd: Path) -> list[dict]:
    """`python program...` in `cwd` (forked, equivalence/forked.py), which must succeed: its `eval_results`."""
    from equivalence import forked
    from equivalence.harness import parse_results
    from equivalence.oracle import quiet_env

    done = forked.run(python, program, cwd, quiet_env(), 600)
    assert done.returncode == 0, done.stderr[-3000:]
    return parse_results(done.stdout)


def _oracle_and_migrated_agree(original: Path, migrated: Path, runs: int, program: str = "trainer.py") -> list[dict]:
    """`program` on the oracle (through the TF 1.x launcher) in `original` and on current TF in
    `migrated`: `runs` eval_results lines each, the same keys, every value within 1e-5 relative.
    The oracle's results."""
    from equivalence.oracle import oracle_python

    want = _eval_results(oracle_python(), [str(LAUNCHER), program], original)
    got = _eval_results(sys.executable, [program], migrated)
    assert len(want) == runs and [sorted(r) for r in want] == [sorted(r) for r in got]
    for expected, actual in zip(want, got):
        assert all(abs(expected[k] - actual[k]) <= 1e-5 * max(abs(expected[k]), 1e-6) for k in expected), (want, got)
    return want


def test_a_tf1_program_with_graph_seeded_draws_repeats_tf1s_numbers_from_a_fresh_start(tmp_path: Path) -> None:
    """A TF 1.x program's `tf.layers` and RNN cell with default (and named) initializers, its two
    dropouts and its shuffle draw their op seeds from the graph seed, in order: hosted, they are
    `tfm.legacy.tf1_layers` / `tf1_rnn_cell` (TF 1.x's initializers, not tf-keras's Python-seeded
    ones), and two fresh runs, TF 1.x on the oracle and the migration here, give the same numbers
    with no checkpoint shared."""
    original, migrated, text = _migrated_hosted(GRAPH_SEEDED_PROGRAM, tmp_path)
    code = text.split('"""', 2)[2]
    assert "tfm.legacy.tf1_rnn_cell.GRUCell(params['units'])" in code and code.count("tfm.legacy.tf1_layers.") == 3
    _oracle_and_migrated_agree(original, migrated, 2)


def test_verify_seeds_the_graphs_of_a_program_that_seeds_nothing(tmp_path: Path) -> None:
    """Without `tf_random_seed`, TF 1.x draws other dropout masks each run (two runs of the original
    disagree); verify seeds every unseeded graph alike on both sides, so the hosted migration is
    compared with one run of the original: equal."""
    source = GRAPH_SEEDED_PROGRAM.read_text(encoding="utf-8")
    assert "RunConfig(tf_random_seed=11)" in source
    unseeded = tmp_path / "unseeded.py"
    unseeded.write_text(source.replace("RunConfig(tf_random_seed=11)", "RunConfig()"), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    _, proc = _migrated_and_verified(unseeded, work, "estimators: 1 strategy")
    assert proc.stdout.splitlines()[-1] == "tfmigrate verify: equivalent: 6 values agree within rtol=1e-05"


SESSION_PROGRAM = Path(__file__).parent / "data" / "tf1_programs" / "session_regression.py"


def test_a_tf1_session_program_keeps_graph_mode_and_the_oracles_numbers(tmp_path: Path) -> None:
    """A TF 1.x program with no estimator (placeholders fed in a `tf.Session`, a `Saver`
    checkpoint restored into a new graph) runs on TF2 only in graph mode: the migration turns it
    on in the main block (TFM104), and gives TF 1.x's losses, global steps and weights on the oracle."""
    original, migrated, code = _migrated_with_no_todo(SESSION_PROGRAM, tmp_path)
    assert code.endswith('if __name__ == "__main__":\n    # tfmigrate: TF1 graph mode, as under TF 1.x (Session/placeholder '
                         'code cannot run eagerly)\n    tf.compat.v1.disable_v2_behavior()\n    app.run(main)\n')
    _oracle_and_migrated_agree(original, migrated, 4)


def test_a_hosted_tf1_program_with_session_code_keeps_graph_mode_and_the_oracles_numbers(tmp_path: Path) -> None:
    """The graph-seeded program with a statistic its main computes in a `tf.Session` (a placeholder
    fed): its estimator is hosted, and TFM104 turns TF1 graph mode on in its main block, as the
    oracle runs TF 1.x programs; the report counts the estimator on the graph tier, and it trains
    there to TF 1.x's numbers."""
    source = GRAPH_SEEDED_PROGRAM.read_text(encoding="utf-8").replace(
        "def main(_):\n",
        "def label_mean():\n  labels = tf.placeholder(tf.float32, [None])\n  with tf.Session() as session:\n"
        "    return float(session.run(tf.reduce_mean(labels), {labels: LABELS}))\n\n\n"
        "def main(_):\n  print('eval_results', {'label_mean': label_mean()})\n",
    )
    program = tmp_path / "source" / "program.py"
    program.parent.mkdir()
    program.write_text(source, encoding="utf-8")
    original, migrated, text = _migrated_hosted(program, tmp_path, "graph")
    assert "if __name__ == '__main__':\n  # tfmigrate: TF1 graph mode" in text and "tf.compat.v1.disable_v2_behavior()" in text
    want = _oracle_and_migrated_agree(original, migrated, 3)
    assert sorted(want[0]) == ["label_mean"] and 0.0 < want[0]["label_mean"] < 1.0


def test_a_failed_run_shows_its_exception_line_when_a_long_stack_follows_it() -> None:
    """TensorFlow's graph-mode errors print the op's creation stack after the message; the
    message still leads what verify shows of the run."""
    from tfmigrate.verify import failure_tail

    message = "tensorflow.python.framework.errors_impl.NotFoundError: Key sequential/dense/kernel not found in checkpoint"
    output = "\n".join(["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', message,
                        "", "Original stack trace for 'save/RestoreV2':"] + [f'  File "tf.py", line {i}, in f' for i in range(40)])
    shown = failure_tail(output).splitlines()
    assert shown[0] == message and shown[1] == "..." and shown[-1] == '  File "tf.py", line 39, in f' and len(shown) == 17
    plain = "Traceback (most recent call last):\n  File \"a.py\", line 3\nValueError: the data directory is missing"
    assert failure_tail(plain) == plain
