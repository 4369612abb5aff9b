"""Keras 2 keywords in a module that keeps Keras 3 (`migrate/keras3_arguments.py`, TFM105): the
verdicts against real Keras 3, the table against current Keras, and the text path against the CST
path."""

from __future__ import annotations

import textwrap
import warnings

import pytest

from test_textpass import _same
from tfmigrate.engine import transform_source
from tfmigrate.keras3_arguments import verdicts

# (callable under tf.keras, positional arguments, keywords): calls Keras 2 took.
CALLS = [
    ("regularizers.l2", (), {"l": 0.1}),
    ("regularizers.L1", (), {"l": 0.1}),
    ("regularizers.L1L2", (), {"l": 0.1}),
    ("optimizers.Adam", (), {"lr": 0.1, "beta_1": 0.8}),
    ("optimizers.SGD", (), {"learning_rate": 0.1, "decay": 0.01}),
    ("layers.BatchNormalization", (), {"fused": True}),
    ("layers.Dense", (2,), {"input_shape": (3,), "kernel_regularizer": None}),
    ("layers.Dense", (2,), {"batch_input_shape": (None, 3)}),
    ("layers.Embedding", (10, 4), {"input_length": 5}),
    ("callbacks.ModelCheckpoint", ("w.weights.h5",), {"period": 5}),
    ("callbacks.EarlyStopping", (), {"patience": 2}),
    ("layers.Dropout", (0.5,), {"noise_shape": None}),
    ("Sequential", (), {"name": "model"}),
]


def _outcomes(path: str, keywords: dict, tf1: bool = True) -> dict[str, tuple[str | None, str | None]]:
    names = list(keywords)
    return {names[index]: (name, message) for index, name, message in verdicts(f"tensorflow.keras.{path}", names, tf1)}


@pytest.mark.tf
@pytest.mark.parametrize("path,args,keywords", CALLS, ids=[f"{c[0]}-{'-'.join(c[2])}" for c in CALLS])
def test_verdicts_say_what_keras3_does(path: str, args: tuple, keywords: dict, tmp_path) -> None:
    """A keyword judged refused makes Keras 3 raise; renamed, the call runs; one judged ignored
    makes it warn; one not judged it takes."""
    import tensorflow as tf

    target = tf.keras
    for part in path.split("."):
        target = getattr(target, part)
    outcomes = _outcomes(path, keywords)
    fixed = {outcomes.get(k, (None, None))[0] or k: v for k, v in keywords.items()
             if outcomes.get(k, (None, None))[1] is None or "ignores it" in outcomes[k][1]}
    refused = [k for k, (name, message) in outcomes.items() if name is None and "ignores it" not in message]
    if refused or any(name for name, _ in outcomes.values()):
        with pytest.raises((TypeError, ValueError)):
            target(*args, **keywords)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        target(*args, **{k: v for k, v in fixed.items() if k not in refused})
    ignored = [k for k, (_, message) in outcomes.items() if message and "ignores it" in message]
    assert bool(ignored) == any("no longer supported" in str(w.message) for w in caught)


def test_aliases_become_keras3_names_where_keras2_always_read_them_so() -> None:
    assert _outcomes("regularizers.l2", {"l": 0.1}) == {"l": ("l2", None)}
    assert _outcomes("regularizers.L1", {"l": 0.1}, tf1=False) == {"l": ("l1", None)}
    assert _outcomes("optimizers.Adam", {"lr": 0.1}) == {"lr": ("learning_rate", None)}
    # TF 2.11-2.15's optimizers ignored `lr`: in a TF 2.x program which rate is meant is not known.
    (name, message), = _outcomes("optimizers.Adam", {"lr": 0.1}, tf1=False).values()
    assert name is None and "TF 2.11-2.15" in message
    # Two of Keras 3's names could be meant, or Keras 3's name is passed too: a TODO.
    assert _outcomes("regularizers.L1L2", {"l": 0.1})["l"][0] is None
    assert _outcomes("optimizers.Adam", {"lr": 0.1, "learning_rate": 0.2})["lr"][0] is None


def test_calls_not_judged() -> None:
    assert list(verdicts("tensorflow.keras.layers.BatchNormalization", ["fused", None], True)) == []  # **kwargs
    assert list(verdicts("tensorflow.keras.Model", ["foo"], True)) == []  # takes anything
    assert list(verdicts("tensorflow.nn.relu", ["foo"], True)) == []  # not Keras
    assert list(verdicts("tensorflow.keras.layers.Dense", ["units", "name"], True)) == []
    # Standalone `keras` is Keras 3 too; `tf.compat.v1.keras` on current TF is.
    assert [v[1] for v in verdicts("keras.optimizers.SGD", ["lr"], True)] == ["learning_rate"]
    assert [v[1] for v in verdicts("tensorflow.compat.v1.keras.regularizers.l1", ["l"], False)] == ["l1"]


PROGRAMS = {
    "tf2_program": """
        import tensorflow as tf
        from tensorflow.keras.optimizers import Adam

        model = tf.keras.Sequential([
            tf.keras.layers.Dense(2, kernel_regularizer=tf.keras.regularizers.l2(l=0.1)),
            tf.keras.layers.BatchNormalization(fused=True),
        ])
        model.compile(optimizer=Adam(lr=0.1, decay=0.01), loss='mse')
    """,
    "tf1_program": """
        import tensorflow as tf
        tf.logging.set_verbosity(tf.logging.INFO)
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_regularizer=tf.keras.regularizers.l1(l=0.1))])
        model.compile(optimizer=tf.keras.optimizers.Adam(lr=0.01, beta_1=0.8), loss='mse')
    """,
    "nested_calls_and_two_in_a_statement": """
        import keras
        opt = [keras.optimizers.SGD(lr=0.1), keras.optimizers.SGD(lr=0.2, decay=1e-3)] if x else keras.layers.Dense(
            2, kernel_regularizer=keras.regularizers.L2(l=keras.regularizers.L1(l=0.1).l1), fused=1)
    """,
    "standalone_keras_beside_tensorflow": """
        import keras
        import tensorflow as tf
        from keras.callbacks import ModelCheckpoint

        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(lr=0.01), loss='mse')
        checkpoint = ModelCheckpoint('model.h5', period=2)
        tf.logging.info('compiled')
    """,
    "keywords_over_lines_and_kwargs": """
        import tensorflow as tf
        def f(kw):
            return tf.keras.optimizers.RMSprop(
                lr=0.1,  # the rate
                **kw), tf.keras.regularizers.l2(
                    l = 0.5)
    """,
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_text_path_equals_cst_path(name: str) -> None:
    source = textwrap.dedent(PROGRAMS[name])
    _same(source)
    _same(transform_source(source).output)


def test_tf1_program_gets_learning_rate_and_tf2_program_a_todo() -> None:
    tf1 = transform_source(textwrap.dedent(PROGRAMS["tf1_program"]))
    assert "Adam(learning_rate=0.01, beta_1=0.8)" in tf1.output and "l1(l1=0.1)" in tf1.output and not tf1.todos
    tf2 = transform_source(textwrap.dedent(PROGRAMS["tf2_program"]))
    assert "l2(l2=0.1)" in tf2.output and "Adam(lr=0.1, decay=0.01)" in tf2.output
    assert len(tf2.todos) == 3  # fused=, lr=, decay=
    assert transform_source(tf2.output).output == tf2.output


def test_standalone_keras_beside_tensorflow_is_checked_on_the_text_path_too() -> None:
    """A file that imports standalone `keras` and TensorFlow spells no TF Keras symbol; its Keras
    calls are checked as the CST path checks them (cloudml-samples' census Keras trainer)."""
    result = transform_source(textwrap.dedent(PROGRAMS["standalone_keras_beside_tensorflow"]))
    assert "keras.optimizers.Adam(learning_rate=0.01)" in result.output and "TFM105" in result.rules
    assert [todo.message for todo in result.todos if "period=" in todo.message]


@pytest.mark.tf
def test_table_is_current_keras() -> None:
    """`rules/data/keras3_keywords.json` is what `scripts/gen_api_table.py check-current` reads off
    the installed Keras 3 (after a Keras upgrade: run it again)."""
    import importlib.util
    import json

    import tensorflow as tf

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("gen_api_table", ROOT / "scripts" / "gen_api_table.py")
    generator = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(generator)  # type: ignore[union-attr]
    table = json.loads((ROOT / "rules" / "data" / "keras3_keywords.json").read_text(encoding="utf-8"))
    assert table["keras_version"] == tf.keras.__version__
    assert generator._keras3_keywords(tf, generator._walk_v2(tf)) == table["callables"]
