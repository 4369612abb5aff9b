"""The hosted tier's `tfm.estimator`: TF1 Estimator programs run as written, with TF 2.15's numbers.

Each program under `hosted_programs/` is a TF1 Estimator/TPUEstimator program in the styles public
code used, spelled for TF 2.15 (`tf.compat.v1.estimator`, `tf.compat.v1.layers`). It runs on the
oracle (TF 2.15 + tensorflow-estimator) as is, and on current TF respelled the way the codemod's
hosted tier leaves a program (`tfm.estimator`, `tfm.legacy.layers`; `migrated_text` below does
that respelling by plain text replacement). Every `eval_results` line must agree within 1e-5.

`tf.layers` (Keras's legacy layers, on TF 2.15 as on tf-keras 2.21) draw their default
initializers' seeds from Python's `random`, not from the graph seed, so programs that rely on the
default initializer seed `random` (TF 2.15 itself gives different numbers run to run otherwise).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from equivalence.harness import compare, run_continued, run_current, run_oracle
from equivalence.oracle import quiet_env

PROGRAMS = Path(__file__).parent / "hosted_programs"
FIXTURES_DIR = Path(__file__).parents[2] / "fixtures"
CASES = sorted(p.stem for p in PROGRAMS.glob("*.py"))


def migrated_text(source: str) -> str:
    """The hosted tier's respelling of a TF 2.15-spelled program (what the codemod will write)."""
    text = source.replace("tf.compat.v1.estimator.", "tfm.estimator.").replace("tf.compat.v1.layers.", "tfm.legacy.layers.")
    return text.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport tfmigrate.runtime as tfm\n", 1)


def _pair(case: str, tmp_path: Path) -> tuple[Path, Path]:
    original = tmp_path / "original" / "program.py"
    migrated = tmp_path / "migrated" / "program.py"
    for path in (original, migrated):
        path.parent.mkdir(parents=True)
    source = (PROGRAMS / f"{case}.py").read_text(encoding="utf-8")
    original.write_text(source, encoding="utf-8")
    migrated.write_text(migrated_text(source), encoding="utf-8")
    return original, migrated


_ORACLE_RESULTS: dict[str, list] = {}  # one oracle run per program, for both tiers (one xdist group)

# What a program runs in graph mode on the strategy tier, and why (any other fallback fails the test).
STRATEGY_TIER_FALLBACKS = {
    "mirrored_dnn": ["runs in graph mode: RunConfig's train_distribute/eval_distribute runs TF 2.15's graph-mode",
                     "runs in graph mode: the program disabled eager execution"],
}


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.parametrize("tier", ["graph", "strategy"])
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xdist_group(f"hosted:{c}")) for c in CASES])
def test_hosted_program_matches_oracle(case: str, tier: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hosted program gives the oracle's numbers on both tiers of a model_fn: TF1 graph mode,
    and the strategy tier (TF2: the model_fn in a tf.function under the default strategy), where
    each call that falls back to graph mode must be one `STRATEGY_TIER_FALLBACKS` lists."""
    original, migrated = _pair(case, tmp_path)
    assert "tf.compat.v1.estimator" not in migrated.read_text()
    if case not in _ORACLE_RESULTS:
        _ORACLE_RESULTS[case] = run_oracle(original, original.parent).check().results
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", tier)
    run = run_current(migrated, migrated.parent).check()
    assert compare(_ORACLE_RESULTS[case], run.results) == []
    if tier == "strategy":
        fallbacks = [line for line in run.stderr.splitlines() if "runs in graph mode" in line]
        expected = STRATEGY_TIER_FALLBACKS.get(case, [])
        assert all(any(reason in line for reason in expected) for line in fallbacks), fallbacks


NO_SESSION = """
import logging
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
from tensorflow.python.client import session as _session


def _no_session(*args, **kwargs):
    raise AssertionError("a tf.compat.v1.Session was made")


_session.BaseSession.__init__ = _no_session
"""


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.xdist_group("hosted:bert_like")
def test_a_bert_style_program_trains_in_tf2_under_mirrored_with_the_one_device_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bert_like (a custom AdamWeightDecay optimizer over tf.gradients and clip_by_global_norm, an
    embedding's sparse gradients, metrics, a warm start) on the strategy tier under a
    MirroredStrategy of two logical CPUs, each replica half of the global batch: no Session in the
    process, and the oracle's one-device numbers (gradients are meaned over the replicas before
    the clipping)."""
    original, migrated = _pair("bert_like", tmp_path)
    text = migrated.read_text()
    migrated.write_text(text.replace("import tfmigrate.runtime as tfm\n", "import tfmigrate.runtime as tfm\n" + NO_SESSION, 1))
    if "bert_like" not in _ORACLE_RESULTS:
        _ORACLE_RESULTS["bert_like"] = run_oracle(original, original.parent).check().results
    for name, value in {"TFMIGRATE_MODEL_FN_TIER": "strategy", "TFMIGRATE_STRATEGY": "mirrored",
                        "TFMIGRATE_CPU_DEVICES": "2"}.items():
        monkeypatch.setenv(name, value)
    run = run_current(migrated, migrated.parent).check()
    assert "runs in graph mode" not in run.stderr
    assert "Training on 2 replicas of MirroredStrategy" in run.stderr
    assert compare(_ORACLE_RESULTS["bert_like"], run.results) == []


@pytest.mark.tf
@pytest.mark.oracle
def test_continues_oracle_checkpoint(tmp_path: Path) -> None:
    """A model_dir the oracle's Estimator trained is restored by `tfm.estimator.Estimator`, which
    continues training exactly as a second TF 2.15 run does (and warm-starts from it)."""
    original, migrated = _pair("bert_like", tmp_path)
    expected, actual = run_continued(original, migrated, tmp_path / "runs")
    assert len(expected) == 6
    assert compare(expected, actual) == []


def _current(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=quiet_env(), timeout=300)


@pytest.mark.tf
def test_import_runtime_does_not_import_tf_keras() -> None:
    proc = _current(
        "import sys, tfmigrate.runtime as tfm\n"
        "assert 'tf_keras' not in sys.modules, 'tf_keras imported eagerly'\n"
        "assert tfm.legacy.layers.Dense.__module__.startswith('tf_keras')\n"
        "assert tfm.legacy.rnn_cell.LSTMCell is not None\n"
        "print('ok')\n"
    )
    assert proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


@pytest.mark.tf
def test_unchecked_distribution_strategy_is_refused_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the graph-mode tier MirroredStrategy and OneDeviceStrategy run (tests below); others say
    what to do instead."""
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "graph")
    strategy = tf.distribute.experimental.CentralStorageStrategy(compute_devices=["/cpu:0"])
    config = tfm.estimator.RunConfig(eval_distribute=strategy)
    with pytest.raises(NotImplementedError, match="eval_distribute=CentralStorageStrategy.*MirroredStrategy"):
        tfm.estimator.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path), config=config)
    config = tfm.estimator.RunConfig(train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"))
    tfm.estimator.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path), config=config)
    with pytest.raises(NotImplementedError, match="TPUEstimator: RunConfig.train_distribute/eval_distribute"):
        tfm.estimator.tpu.TPUEstimator(
            lambda features, labels, mode, params: None, config=config, train_batch_size=2, use_tpu=False
        )


@pytest.mark.tf
def test_eager_collective_mirrored_is_refused_clearly_in_graph_mode(tmp_path: Path, two_cpus: list[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A MirroredStrategy created eagerly over CPUs all-reduces with CollectiveAllReduce; TF 2.15's
    Estimator hangs in its first training step with it (measured: the oracle's `session.run` never
    returned, nor the hosted tier's, with 2 or 8 inter-op threads), so the graph-mode tier refuses
    it up front, and a call the strategy tier leaves to graph mode refuses it before it runs. (The
    strategy tier itself trains with it: `test_runconfig_strategy_trains_in_tf2_with_the_oracles_numbers`;
    a hook saving through its Session sends this call to graph mode.)"""
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    strategy = tfm.make_strategy("mirrored", devices=two_cpus)  # the runtime's cached one (see test_no_second_mirrored)
    config = tfm.estimator.RunConfig(train_distribute=strategy)
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "graph")
    with pytest.raises(NotImplementedError, match="CollectiveAllReduce.*disable_eager_execution.*ReductionToOneDevice"):
        tfm.estimator.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path), config=config)
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    estimator = tfm.estimator.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path), config=config)
    with pytest.raises(NotImplementedError, match="CollectiveAllReduce"):
        estimator.train(lambda: None, steps=1, hooks=[tf.compat.v1.train.CheckpointSaverHook(str(tmp_path), save_steps=1)])


@pytest.mark.tf
def test_mirrored_replicas_in_process(tmp_path: Path, two_cpus: list[str]) -> None:
    """Without the oracle: under MirroredStrategy each replica takes its own batch of input_fn's
    dataset (eval counts 2 x 4 examples per step), the global step moves once per step, and the
    mirrored variables go to the checkpoint under their plain names."""
    import numpy as np
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    strategy = tfm.make_strategy("mirrored", devices=two_cpus, cross_device_ops=tf.distribute.ReductionToOneDevice())
    assert strategy.num_replicas_in_sync == 2

    def input_fn(mode):
        x = np.arange(32, dtype=np.float32).reshape(16, 2) / 10.0
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1]))
        return (ds.repeat() if mode == tfm.estimator.ModeKeys.TRAIN else ds).batch(4)

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer(0.5))
        pred = tf.matmul(features["x"], w)
        if mode == tfm.estimator.ModeKeys.PREDICT:
            return tfm.estimator.EstimatorSpec(mode, predictions=pred)
        loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
        if mode == tfm.estimator.ModeKeys.EVAL:
            ones = tf.ones_like(pred, dtype=tf.bool)
            return tfm.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "examples": tf.compat.v1.metrics.true_positives(ones, ones)})
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    config = tfm.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy, tf_random_seed=1)
    est = tfm.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=config)
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3
    assert sorted(est.get_variable_names()) == ["global_step", "w"]
    one = est.evaluate(input_fn, steps=1)
    assert one["examples"] == 8.0 and one["global_step"] == 3
    assert est.evaluate(input_fn)["examples"] == 16.0
    assert len(list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": np.ones((5, 2), np.float32)}).batch(2)))) == 5


def _variant(tmp_path: Path, replacements: dict[str, str], case: str = "mirrored_dnn") -> tuple[Path, Path]:
    """A hosted program with source text replaced (the same in the original and the migration)."""
    original, migrated = _pair(case, tmp_path)
    for path in (original, migrated):
        text = path.read_text(encoding="utf-8")
        for old, new in replacements.items():
            assert old in text
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return original, migrated


MIRRORED = 'tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1"])'


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.parametrize(
    "replacements, replicas",
    [
        ({MIRRORED: 'tf.distribute.OneDeviceStrategy("/cpu:1")'}, 1.0),  # one replica, on the second CPU
        ({"eval_distribute=strategy, ": ""}, 2.0),  # trained mirrored, evaluated on one device
    ],
    ids=["one_device", "train_distribute_only"],
)
def test_strategy_variants_match_oracle(tmp_path: Path, replacements: dict, replicas: float) -> None:
    original, migrated = _variant(tmp_path, replacements)
    expected = run_oracle(original, original.parent).check().results
    actual = run_current(migrated, migrated.parent).check().results
    assert expected[0] == {"input_fn_calls": 1.0, "pipelines": 1.0, "replicas": replicas}
    assert compare(expected, actual) == []


@pytest.mark.tf
@pytest.mark.oracle
def test_mirrored_batch_norm_train_and_evaluate_matches_oracle(tmp_path: Path) -> None:
    """bn_dnn.py (batch norm's UPDATE_OPS, Adam, train_and_evaluate with an exporter, AUC, predict)
    with `train_distribute=eval_distribute=MirroredStrategy` over two logical CPUs.

    The strategy is created with eager execution on (bn_dnn does not disable it), so it is given
    `ReductionToOneDevice`: the CollectiveAllReduce it would pick hangs TF 2.15's Estimator
    (see `test_eager_collective_mirrored_is_refused_clearly`). The eval input is 4 whole batches:
    with an uneven end TF 2.15's metrics race (they differ run to run on the oracle).
    """
    strategy = (
        "tf.distribute.MirroredStrategy(devices=['/cpu:0', '/cpu:1'], "
        "cross_device_ops=tf.distribute.ReductionToOneDevice())"
    )
    head = "import tensorflow as tf\n"
    original, migrated = _variant(
        tmp_path,
        {
            head: head + "_cpu = tf.config.list_physical_devices('CPU')[0]\n"
            "tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)\n"
            f"STRATEGY = {strategy}\n",
            "RunConfig(tf_random_seed=3,": "RunConfig(train_distribute=STRATEGY, eval_distribute=STRATEGY, tf_random_seed=3,",
            "X[:40]}, Y[:40])).batch(16)": "X[:64]}, Y[:64])).batch(16)",  # whole batches for both replicas
        },
        case="bn_dnn",
    )
    expected = run_oracle(original, original.parent).check().results
    actual = run_current(migrated, migrated.parent).check().results
    assert len(expected) == 9
    assert compare(expected, actual) == []


EAGER_MIRRORED = {
    "tf.compat.v1.disable_eager_execution()\n": "",
    MIRRORED: 'tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1"], '
              "cross_device_ops=tf.distribute.ReductionToOneDevice())",
}


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.parametrize("migrated_strategy", ["as_written", "collective"])
def test_runconfig_strategy_trains_in_tf2_with_the_oracles_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, migrated_strategy: str
) -> None:
    """mirrored_dnn with eager execution on (as TF2 programs are): `RunConfig(train_distribute=,
    eval_distribute=)` runs on the strategy tier, in TF2 under the program's own MirroredStrategy
    (no Session in the process), each replica its own batch of the input_fn's dataset and the V1
    optimizer scaling and summing as under TF 2.15's Estimator: the oracle's numbers. TF 2.15 needs
    `ReductionToOneDevice` (an eagerly made CPU MirroredStrategy's CollectiveAllReduce hangs its
    Estimator); in TF2 the strategy's own choice (`collective`) gives the same numbers."""
    original, migrated = _variant(tmp_path, EAGER_MIRRORED)
    if migrated_strategy == "collective":
        text = migrated.read_text()
        migrated.write_text(text.replace(", cross_device_ops=tf.distribute.ReductionToOneDevice())", ")"))
    text = migrated.read_text()
    migrated.write_text(text.replace("import tfmigrate.runtime as tfm\n", "import tfmigrate.runtime as tfm\n" + NO_SESSION, 1))
    expected = run_oracle(original, original.parent).check().results
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    run = run_current(migrated, migrated.parent).check()
    assert "runs in graph mode" not in run.stderr
    assert "Training on 2 replicas of MirroredStrategy" in run.stderr
    assert expected[0] == {"input_fn_calls": 1.0, "pipelines": 1.0, "replicas": 2.0}
    assert compare(expected, run.results) == []


@pytest.mark.tf
@pytest.mark.oracle
def test_each_mirrored_replica_sums_only_its_own_losses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model_fn whose loss adds `tf.losses.get_regularization_loss()` (layer regularizers), run
    under TFMIGRATE_STRATEGY=mirrored with the global batch split over two replicas: the oracle's
    one-device numbers. The replicas build one function graph; before, the second replica's
    `get_regularization_loss()` read the first one's penalties too (evaluation loss 4% off)."""
    fixture = FIXTURES_DIR / "TFM201_estimator_to_keras" / "mirrored_regularized_layers_hosted"
    one_device = {", train_distribute=strategy": ""}
    original, migrated = tmp_path / "original" / "program.py", tmp_path / "migrated" / "program.py"
    for path, suffix in ((original, ".in.py"), (migrated, ".out.py")):
        path.parent.mkdir(parents=True)
        text = fixture.with_name(fixture.name + suffix).read_text(encoding="utf-8")
        for old, new in one_device.items():
            assert old in text
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    text = migrated.read_text(encoding="utf-8")
    migrated.write_text(text.replace("import tfmigrate.runtime as tfm\n", "import tfmigrate.runtime as tfm\n" + NO_SESSION, 1))
    expected = run_oracle(original, original.parent).check().results
    for name, value in {"TFMIGRATE_MODEL_FN_TIER": "strategy", "TFMIGRATE_STRATEGY": "mirrored"}.items():
        monkeypatch.setenv(name, value)
    run = run_current(migrated, migrated.parent).check()
    assert "Training on 2 replicas of MirroredStrategy" in run.stderr and "runs in graph mode" not in run.stderr
    assert len(expected) == 2
    assert compare(expected, run.results) == []


TRAIN_SCAFFOLD_SAVER = {
    "            train_op = ema.apply(ema_vars)\n":
    "            train_op = ema.apply(ema_vars)\n\n"
    "        def train_scaffold():\n"
    "            return tf.compat.v1.train.Scaffold(saver=tf.compat.v1.train.Saver({SAVER_VARS}max_to_keep=1))\n",
    "(mode, loss=loss, train_op=train_op)\n": "(mode, loss=loss, train_op=train_op, scaffold_fn=train_scaffold)\n",
    '    print("eval_results", repr({"p0": float(first["probabilities"][0])}))\n':
    '    print("eval_results", repr({"p0": float(first["probabilities"][0])}))\n'
    '    state = tf.train.get_checkpoint_state("ema_eval")\n'
    '    print("eval_results", repr({"kept": len(state.all_model_checkpoint_paths)}))\n',
}


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.parametrize("saver_vars", ["", "{v.op.name: v for v in tf.compat.v1.global_variables()}, "],
                         ids=["all_variables", "name_map"])
def test_a_training_scaffolds_own_saver_saves_in_tf2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     saver_vars: str) -> None:
    """tpu_ema_eval_scaffold whose training Scaffold has a Saver of its own (`max_to_keep=1`, of
    every variable or a name -> variable map of them): TF 1.x restored and saved training's
    checkpoints through it (`CheckpointSaverHook` took the Scaffold's Saver). On the strategy
    tier, with no call in graph mode: the oracle's numbers and the one checkpoint it kept."""
    replacements = {old: new.replace("{SAVER_VARS}", saver_vars) for old, new in TRAIN_SCAFFOLD_SAVER.items()}
    original, migrated = _variant(tmp_path, replacements, case="tpu_ema_eval_scaffold")
    expected = run_oracle(original, original.parent).check().results
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    run = run_current(migrated, migrated.parent).check()
    assert "runs in graph mode" not in run.stderr
    assert expected[-1] == {"kept": 1.0}
    assert compare(expected, run.results) == []


@pytest.mark.tf
@pytest.mark.oracle
def test_mirrored_continues_oracle_checkpoint(tmp_path: Path) -> None:
    """A model_dir TF 2.15 trained under MirroredStrategy: `tfm.estimator` continues it (mirrored
    variables restore from and save to the same checkpoint names) as a second TF 2.15 run does."""
    original, migrated = _pair("mirrored_dnn", tmp_path)
    expected, actual = run_continued(original, migrated, tmp_path / "runs")
    assert len(expected) == 10
    assert expected[0] == {"input_fn_calls": 1.0, "pipelines": 1.0, "replicas": 2.0}
    assert compare(expected, actual) == []


@pytest.mark.tf
def test_spec_validation_and_defaults(tmp_path: Path) -> None:
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    est = tfm.estimator.Estimator(lambda features, labels, mode: None)
    assert est.model_dir and Path(est.model_dir).is_dir()  # a temporary model_dir, as TF1
    assert est.config.model_dir == est.model_dir
    with pytest.raises(ValueError, match="both in constructor and `RunConfig`"):
        tfm.estimator.Estimator(lambda features: None, model_dir="a", config=tfm.estimator.RunConfig(model_dir="b"))
    with tf.Graph().as_default():
        loss = tf.constant([2.0])
        with pytest.raises(ValueError, match="Missing train_op"):
            tfm.estimator.EstimatorSpec(tfm.estimator.ModeKeys.TRAIN, loss=loss)
        with pytest.raises(ValueError, match="Missing loss"):
            tfm.estimator.EstimatorSpec(tfm.estimator.ModeKeys.EVAL)
        spec = tfm.estimator.EstimatorSpec(tfm.estimator.ModeKeys.EVAL, loss=loss)
        assert spec.loss.shape.rank == 0 and isinstance(spec.scaffold, tf.compat.v1.train.Scaffold)
        predict = tfm.estimator.EstimatorSpec(tfm.estimator.ModeKeys.PREDICT, predictions=loss)
        assert list(predict.export_outputs) == ["serving_default"]
    with pytest.raises(ValueError, match="reserved keys"):
        tfm.estimator.tpu.TPUEstimator(lambda features, params: None, params={"batch_size": 2}, use_tpu=False)
    assert tfm.estimator.ModeKeys.PREDICT == "infer"
    assert tfm.estimator.tpu.RunConfig is tfm.RunConfig


@pytest.mark.tf
def test_early_stopping_hook_and_numpy_input_fn(tmp_path: Path) -> None:
    import numpy as np
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(loss, tf.compat.v1.train.get_global_step()))

    x = np.arange(24, dtype=np.float32).reshape(8, 3) / 24
    y = x.sum(axis=1, keepdims=True)
    train = tfm.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=4, num_epochs=None, shuffle=False)
    once = tfm.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=3, num_epochs=1, shuffle=False)
    est = tfm.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    def hook():
        return tfm.estimator.experimental.stop_if_higher_hook(est, "loss", -1.0, run_every_secs=None, run_every_steps=1)

    est.train(train, steps=2, hooks=[hook()])  # no evaluation yet: nothing stops (and STOP is checkpointed, as TF1)
    result = est.evaluate(once)  # 3 batches (3, 3, 2 examples); loss is the mean of the batch losses
    assert result["global_step"] == 2
    est.train(train, steps=10, hooks=[hook()])
    assert est.get_variable_value("global_step") == 3  # stopped after the first step
    assert est.get_variable_value("signal_early_stopping/STOP")


@pytest.mark.tf
def test_an_input_fn_the_strategy_tier_cannot_make_a_dataset_of_runs_in_graph_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """An input_fn returning a one-shot iterator's tensors runs on the strategy tier (hosted program
    one_shot_iterator_input); one that draws random numbers after `get_next()` (a map would draw
    other numbers than TF 1.x's per-run ones) trains in graph mode, saying why."""
    import numpy as np
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    x = np.arange(24, dtype=np.float32).reshape(8, 3)

    def input_fn(noise):
        dataset = tf.compat.v1.data.Dataset.from_tensor_slices((x, x[:, :1])).repeat().batch(4)
        features, labels = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        if noise:
            features += tf.random.normal(tf.shape(features))
        return {"x": features}, labels

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.constant_initializer(0.01))
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        step = tf.compat.v1.train.get_global_step()
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.assign_add(step, 1))

    for noise, model_dir in ((False, "plain"), (True, "noisy")):
        estimator = tfm.estimator.Estimator(model_fn, model_dir=str(tmp_path / model_dir))
        with caplog.at_level("WARNING"):
            estimator.train(lambda noise=noise: input_fn(noise), steps=2)
        assert estimator.get_variable_value("global_step") == 2
    fallbacks = [r.getMessage() for r in caplog.records if "runs in graph mode" in r.getMessage()]
    assert fallbacks == ["Training runs in graph mode: input_fn returns tensors and draws random numbers after get_next()."]


@pytest.mark.tf
def test_hooks_the_strategy_tier_cannot_run_send_their_call_to_graph_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Per-step hooks run on the strategy tier in training, evaluation and prediction (hosted
    program per_step_hooks); a hook saving through its Session runs its call in graph mode, and
    the warning says which hook."""
    import numpy as np
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    x = np.arange(24, dtype=np.float32).reshape(8, 3)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).repeat().batch(4)

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.constant_initializer(0.01))
        if mode == tfm.estimator.ModeKeys.PREDICT:
            return tfm.estimator.EstimatorSpec(mode, predictions=tf.matmul(features["x"], w))
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tfm.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    logging_hook = tf.compat.v1.train.LoggingTensorHook({"step": "global_step:0"}, every_n_iter=1)
    with caplog.at_level("WARNING"):
        estimator.train(input_fn, steps=2, hooks=[logging_hook])
        estimator.train(input_fn, steps=1, hooks=[tf.compat.v1.train.CheckpointSaverHook(str(tmp_path), save_steps=1)])
        estimator.evaluate(lambda: input_fn().take(1), hooks=[logging_hook])
        assert len(list(estimator.predict(lambda: input_fn().take(1), hooks=[logging_hook]))) == 4
        writer = tf.compat.v1.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path / "s"),
                                                     scaffold=tf.compat.v1.train.Scaffold())
        estimator.evaluate(lambda: input_fn().take(1), hooks=[writer])
    assert estimator.get_variable_value("global_step") == 3
    fallbacks = [r.getMessage() for r in caplog.records if "runs in graph mode" in r.getMessage()]
    assert fallbacks == ["Train runs in graph mode: train(hooks=...): CheckpointSaverHook saves through its Session.",
                         "Evaluate runs in graph mode: evaluate(hooks=...): SummarySaverHook saves through its Session."]


@pytest.mark.tf
def test_a_hooks_stop_request_holds_on_a_step_that_saves_a_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run_context.request_stop()` on the step where a checkpoint is due still ends training there
    (the checkpoint's listeners did not ask to stop, and that must not undo the hook's request)."""
    import numpy as np
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    x = np.arange(24, dtype=np.float32).reshape(8, 3)

    class StopAfterTwo(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 2:
                run_context.request_stop()

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.constant_initializer(0.01))
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return tfm.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    for tier in ("graph", "strategy"):  # (the graph-mode tier is TF 1.x's MonitoredSession)
        monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", tier)
        config = tfm.estimator.RunConfig(model_dir=str(tmp_path / tier), save_checkpoints_steps=2)
        estimator = tfm.estimator.Estimator(model_fn, config=config)
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).repeat().batch(4), steps=10,
                        hooks=[StopAfterTwo()])
        assert estimator.get_variable_value("global_step") == 2, tier
