"""The strategy tier (runtime/model_fn/): a TF1 model_fn run as written inside a strategy's
tf.function, checked against the oracle's numbers.

The TPU program here is a TPUEstimator fixture (a BERT-style warm-up rate from the global step,
`minimize` built in every mode, `iterations_per_loop=3`) given TPU programs' code path: `if
params['use_tpu']: optimizer = CrossShardOptimizer(optimizer)`, and `use_tpu` from the USE_TPU
variable. Its math does not depend on how the batch is split, so its TPU code path on any number
of replicas must give the one-device numbers TF 2.15 gives with use_tpu=False (the oracle has no
TPU). The hosted programs on the strategy tier are in test_hosted_estimator.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from equivalence.harness import compare, run_current, run_oracle

from conftest import FIXTURES

FIXTURE = FIXTURES / "TFM301_tpu_estimator_to_keras" / "linear_warmup_polynomial_decay.in.py"
_ORACLE: list = []


def tpu_program() -> str:
    """The fixture on TPU programs' code path, `use_tpu` from USE_TPU (unset on the oracle)."""
    text = FIXTURE.read_text()
    text = text.replace("import numpy as np\n", "import os\n\nimport numpy as np\n", 1)
    text = text.replace("  optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)\n",
                        "  optimizer = tf.train.MomentumOptimizer(learning_rate, momentum=0.9)\n"
                        "  if params['use_tpu']:\n    optimizer = tf.tpu.CrossShardOptimizer(optimizer)\n")
    text = text.replace("use_tpu=False", "use_tpu=os.environ.get('USE_TPU') == '1'")
    assert "CrossShardOptimizer" in text and "USE_TPU" in text
    return text

pytestmark = [pytest.mark.tf, pytest.mark.oracle, pytest.mark.xdist_group("strategy-tier:cross_shard")]


def migrated_text(source: str) -> str:
    """The hosted tier's spelling of the TF 1.x program (what the codemod writes for it)."""
    text = source.replace("tf.layers.dense", "tfm.legacy.tf1_layers.dense").replace("tf.estimator.tpu.", "tfm.estimator.tpu.")
    return text.replace("import tensorflow.compat.v1 as tf\n", "import tensorflow.compat.v1 as tf\nimport tfmigrate.runtime as tfm\n", 1)


def _oracle_results(tmp_path: Path) -> list:
    if not _ORACLE:
        original = tmp_path / "original" / "program.py"
        original.parent.mkdir()
        original.write_text(tpu_program())
        _ORACLE.append(run_oracle(original, original.parent).check().results)
    return _ORACLE[0]


@pytest.mark.parametrize(
    ("strategy", "replicas", "jit"),
    [("default", 1, False), ("mirrored", 2, False), ("default", 1, True)],
    ids=["one-replica", "two-mirrored-replicas", "xla"],
)
def test_a_tpu_program_trains_on_its_tpu_code_path_with_the_oracles_numbers(
    strategy: str, replicas: int, jit: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TPUEstimator(use_tpu=True) on the strategy tier: params['use_tpu'] is True, each replica a TPU
    core with its share of the batch, CrossShardOptimizer's sum an all-reduce over the replicas (on
    one replica, with no CrossReplicaSum kernel on a CPU, the graph tier had to run use_tpu as
    False). Under TFMIGRATE_JIT_COMPILE=1 the step is compiled with XLA; the tolerance stays 1e-5.
    The program makes its TPUClusterResolver with no TPU name, as TPU programs do wherever use_tpu
    is set: off Cloud TPU that raises, and under TFMIGRATE_STRATEGY it resolves to this machine."""
    expected = _oracle_results(tmp_path)
    migrated = tmp_path / "migrated" / "program.py"
    migrated.parent.mkdir()
    text = migrated_text(tpu_program()).replace(
        "import tfmigrate.runtime as tfm\n",
        'import tfmigrate.runtime as tfm\nimport logging\nlogging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")\n', 1)
    text = text.replace("  config = tfm.estimator.tpu.RunConfig(\n", "  config = tfm.estimator.tpu.RunConfig(\n"
                        "      cluster=tf.distribute.cluster_resolver.TPUClusterResolver(os.environ.get('TPU_NAME')),\n", 1)
    assert "TPUClusterResolver(" in text
    migrated.write_text(text)
    env = {"USE_TPU": "1", "TFMIGRATE_MODEL_FN_TIER": "strategy", "TFMIGRATE_STRATEGY": strategy}
    if replicas > 1:
        env["TFMIGRATE_CPU_DEVICES"] = str(replicas)
    if jit:
        env["TFMIGRATE_JIT_COMPILE"] = "1"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    run = run_current(migrated, migrated.parent).check()
    assert "runs in graph mode" not in run.stderr
    plural = "" if replicas == 1 else "s"
    assert f"Training on {replicas} replica{plural} of" in run.stderr
    assert (" (XLA)." in run.stderr) == jit
    assert "TPUClusterResolver(tpu=None) resolves to this machine's devices" in run.stderr
    assert compare(expected, run.results) == []


def test_a_tpu_program_wrapping_cross_shard_on_its_own_flag_runs_on_the_graph_tier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TPU programs that wrap CrossShardOptimizer on their own flag (`if FLAGS.use_tpu:`, as
    EfficientNet does) rather than on `params['use_tpu']`: where such a call runs on the graph-mode
    tier (use_tpu run as False, on the CPU), the optimizer's all-reduce is the sum over its one
    shard (a CPU has no CrossReplicaSum kernel), and the numbers are the oracle's use_tpu=False ones."""
    expected = _oracle_results(tmp_path)
    migrated = tmp_path / "migrated" / "program.py"
    migrated.parent.mkdir()
    text = migrated_text(tpu_program()).replace("  if params['use_tpu']:\n", "  if os.environ.get('USE_TPU') == '1':\n")
    assert "if os.environ.get('USE_TPU') == '1':\n    optimizer = tf.tpu.CrossShardOptimizer" in text
    migrated.write_text(text)
    for name, value in {"USE_TPU": "1", "TFMIGRATE_MODEL_FN_TIER": "graph"}.items():
        monkeypatch.setenv(name, value)
    run = run_current(migrated, migrated.parent).check()
    assert compare(expected, run.results) == []


def test_tpu_resolvers_are_left_alone_without_tfmigrate_strategy() -> None:
    """Only TFMIGRATE_STRATEGY makes a TPUClusterResolver resolve locally (above): a program run
    as it is looks up the TPU it names, as under TF 1.x."""
    import importlib
    import os

    import tensorflow as tf

    importlib.import_module("tfmigrate.runtime")  # (its import is where the override would apply)

    assert not os.environ.get("TFMIGRATE_STRATEGY")
    assert not getattr(tf.distribute.cluster_resolver.TPUClusterResolver.__init__, "resolves_locally", False)


def test_use_tpu_asks_for_the_tpu_its_run_config_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """TPUEstimator(use_tpu=True) on the strategy tier asks `make_strategy` for a TPUStrategy on the
    TPU the program's RunConfig names: its `cluster` (BERT's TPUClusterResolver from --tpu_name),
    else a `master="grpc://..."` address, else whatever TPUClusterResolver() finds. (This machine
    has no TPU: `make_strategy` is recorded here, not run; its TPU resolution is test_strategy's.)"""
    import tensorflow as tf

    import tfmigrate.runtime as tfm
    import tfmigrate.runtime.strategy as strategy_module

    asked: list = []

    def recorded(kind, **options):
        asked.append((kind, options))
        return tf.distribute.get_strategy()

    monkeypatch.setattr(strategy_module, "make_strategy", recorded)
    resolver = object.__new__(tf.distribute.cluster_resolver.TPUClusterResolver)  # (not connected)
    configs = [tfm.estimator.tpu.RunConfig(cluster=resolver), tfm.estimator.tpu.RunConfig(master="grpc://10.0.0.2:8470"),
               tfm.estimator.tpu.RunConfig(master=""), tfm.estimator.tpu.RunConfig()]
    for config in configs:
        tfm.estimator.tpu.TPUEstimator(lambda features, labels, mode, params: None, config=config, use_tpu=True,
                                       train_batch_size=8)._default_strategy()
    assert asked == [
        ("auto", {"use_tpu": True, "cluster_resolver": resolver, "tpu": None}),
        ("auto", {"use_tpu": True, "cluster_resolver": None, "tpu": "grpc://10.0.0.2:8470"}),
        ("auto", {"use_tpu": True, "cluster_resolver": None, "tpu": None}),
        ("auto", {"use_tpu": True, "cluster_resolver": None, "tpu": None}),
    ]


def test_iterations_per_loop_steps_run_in_one_call_of_one_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  model_fn_step_calls: dict) -> None:
    """`iterations_per_loop` is steps per tf.function call, the count a tensor: with no summaries,
    13 then 10 steps at 5 per loop are 5 calls, a checkpoint every 10 steps ending a loop there;
    Estimator's `loss` summary, due at each train() call's first step, ends one after that step
    (TF 2.15's TPUEstimator ran one step per session.run off a TPU and wrote it there). The step
    function is traced once across the calls, the train() calls and the checkpoints."""
    import numpy as np
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    calls = model_fn_step_calls

    def input_fn(params):
        x = np.arange(64, dtype=np.float32).reshape(32, 2) / 10.0
        return tf.data.Dataset.from_tensor_slices((x, x[:, :1])).repeat().batch(params["batch_size"], drop_remainder=True)

    def model_fn(features, labels, mode, params):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer(0.1))
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss, tf.compat.v1.train.get_global_step())
        return tfm.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    for summaries, expected in ((None, [5, 5, 3, 5, 5]), (100, [1, 5, 4, 3, 1, 5, 4])):
        calls.clear()
        config = tfm.estimator.tpu.RunConfig(model_dir=str(tmp_path / str(summaries)), save_checkpoints_steps=10,
                                             save_summary_steps=summaries,
                                             tpu_config=tfm.estimator.tpu.TPUConfig(iterations_per_loop=5))
        estimator = tfm.estimator.tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=8)
        estimator.train(input_fn, max_steps=13)
        estimator.train(input_fn, steps=10)
        assert estimator.get_variable_value("global_step") == 23
        (key, counts), = calls.items()
        assert counts == expected, (summaries, counts)
        assert estimator._runner._functions[key].experimental_get_tracing_count() == 1  # noqa: SLF001
