"""Which sources are TF 1.x programs (`tfmigrate.tf1_program`): what changes how TFM101 reads them."""

from __future__ import annotations

import ast

import pytest

from tfmigrate.runner import run
from tfmigrate.textpass import SourceView
from tfmigrate.tf1_program import is_tf1_source, written_for_tf2

TF1 = [
    "import tensorflow as tf\nsess = tf.Session()\n",
    "from tensorflow.contrib import slim\n",
    "from tensorflow import placeholder\n",
    "from tensorflow import (\n    float32,\n    Session,  # runs the graph\n)\n",
    "from tensorflow import nn, layers\n",
    "from tensorflow.train import AdamOptimizer\n",
    "import tensorflow as tf\nloss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=z)\n",  # TF1's losses
    "import tensorflow as tf\nacc = tf.metrics.accuracy(labels=y, predictions=p)\n",  # and metrics
    "import tensorflow as tf\nat_k = tf.metrics.precision_at_k(y, p, 5)\n",
]
NOT_TF1 = [
    "import tensorflow as tf\nmodel = tf.keras.Sequential()\n",
    "import tensorflow.compat.v1 as tf\nsess = tf.Session()\n",  # TF2 code reaching for compat.v1
    "from tensorflow import keras\n",
    "from tensorflow.keras import layers\n",
    "from tensorflow.train import Checkpoint\n",
    "from tensorflow import float32\nx = Session()\n",  # the name is not imported from tensorflow
    "import tensorflow as tf\nloss = tf.losses.mean_squared_error(y, p)\n",  # TF2 (Keras) has these too
    "import tensorflow as tf\nerror = tf.metrics.mean_absolute_error(y, p)\nm = tf.metrics.Precision()\n",
    "import tensorflow as tf\nm = tf.metrics.mean_squared_error(y, p)\n",
]


@pytest.mark.parametrize("source", TF1)
def test_tf1_names_imported_by_name_make_a_tf1_program(source: str) -> None:
    assert is_tf1_source(source)


@pytest.mark.parametrize("source", NOT_TF1)
def test_tf2_code_is_not_read_as_tf1(source: str) -> None:
    assert not is_tf1_source(source)


WRITTEN_FOR_TF2 = [
    "import tensorflow as tf\nwriter = tf.summary.create_file_writer(logdir)\n",  # API TF 1.x never had
    "import tensorflow as tf\ntf.random.set_seed(0)\n",
    "import tensorflow as tf\nm = tf.metrics.CategoricalAccuracy()\n",
    "import tensorflow as tf\ndef log(v, step):\n    tf.summary.scalar('loss', v, step=step)\n",  # TF2's op by its keyword
    "import tensorflow as tf\ntf.summary.histogram(name='w', data=w)\n",
    "from tensorflow import summary\nsummary.text('t', x, description='d')\n",
]
NOT_WRITTEN_FOR_TF2 = [
    "import tensorflow as tf\ntf.summary.scalar('loss', v)\n",  # TF1's op as much as TF2's
    "import tensorflow as tf\ntf.summary.scalar('loss', v, collections=['c'])\n",
    "import tensorflow as tf\ninit = tf.random_normal_initializer()\nest = tf.estimator.DNNClassifier([3], cols)\n",
    "import tensorflow as tf\nx = tf.keras.layers.Dense(3)\n",  # Keras's names: TF 1.x had tf.keras
    "import tensorflow as tf\ntf.compat.v2.summary.create_file_writer(d)\n",  # compat: reachable from TF 1.x too
    "import tensorflow.compat.v1 as tf\ntf.summary.scalar('loss', v, step=s)\n",  # not TF2's module
    "import mylib as tf\nw = tf.summary.create_file_writer(d)\n",
]


def _view(source: str) -> SourceView:
    return SourceView(source, ast.parse(source))


@pytest.mark.parametrize("source", WRITTEN_FOR_TF2)
def test_tf2_only_api_marks_a_file_written_for_tf2(source: str) -> None:
    assert written_for_tf2(_view(source))


@pytest.mark.parametrize("source", NOT_WRITTEN_FOR_TF2)
def test_api_both_had_marks_nothing(source: str) -> None:
    assert not written_for_tf2(_view(source))


def test_a_tf1_projects_file_written_for_tf2_is_migrated_as_tf2(tmp_path) -> None:
    """One run over a repository of many programs (google-research/language): its TF 1.x files
    make the run a TF 1.x project, whose bare `tf.summary.scalar` is TF1's (`tf.compat.v1`); a
    TF2 program beside them keeps TF2's, which takes `step=` (TF1's raised TypeError)."""
    (tmp_path / "tf1_trainer.py").write_text('import tensorflow as tf\n\ntf.logging.info("legacy trainer")\n')
    tf2 = ("import tensorflow as tf\n\n\ndef write(writer, value, step):\n    with writer.as_default():\n"
           "        tf.summary.scalar('loss', value, step=step)\n\n\ndef init():\n"
           "    return tf.random_normal_initializer()\n")
    (tmp_path / "tf2_writer.py").write_text(tf2)
    tf1_module = "import tensorflow as tf\n\n\ndef summarize(loss):\n    tf.summary.scalar('loss', loss)\n"
    (tmp_path / "tf1_model.py").write_text(tf1_module)
    run([str(tmp_path)])
    assert (tmp_path / "tf2_writer.py").read_text() == tf2
    # (no TF1-only API of its own: the project's TF 1.x reading, as before)
    assert "tf.compat.v1.summary.scalar('loss', loss)" in (tmp_path / "tf1_model.py").read_text()
    assert "logging.info" in (tmp_path / "tf1_trainer.py").read_text()


def test_the_tf1_only_scan_finds_what_the_word_bounded_regex_finds() -> None:
    """`_spells_tf1_only` (the regex without its leading `\\b`, each hit checked for a word
    character before it) answers as `_TF1_ONLY.search` does on generated text, a hit inside a
    rejected one included (`xtf.layers.tf.Session`)."""
    import random

    from tfmigrate.tf1_program import _TF1_ONLY, _spells_tf1_only

    rng = random.Random(3)
    parts = ["tf.", "tf.Session", "tf.layers.", "x", "Session", ".", " ", "layers", "é", "_", "gfile", "tf", "contrib", "\n", "2"]
    texts = ["xtf.layers.tf.Session", "tf.Session", "_tf.gfile", "étf.gfile", "é tf.gfile"]
    texts += ["".join(rng.choice(parts) for _ in range(rng.randint(1, 12))) for _ in range(5000)]
    found = 0
    for text in texts:
        expected = bool(_TF1_ONLY.search(text))
        assert _spells_tf1_only(text) == expected, text
        found += expected
    assert found > 300 and found < len(texts) - 300


def test_the_import_patterns_are_tried_only_where_they_can_match() -> None:
    """`is_tf1_source` tries its line-anchored import patterns only where the text holds what each
    match must (`tensorflow.contrib`, `tensorflow.compat.v1`, `from tensorflow ... import`); on
    generated import lines it answers as the patterns alone do."""
    import random

    from tfmigrate.tf1_program import _COMPAT_IMPORT, _CONTRIB_IMPORT, _TF1_FROM_IMPORT, _spells_tf1_only

    rng = random.Random(5)
    blank, gap = ["", " ", "\t", "  ", "\n", "x = 1\n"], [" ", "\t", "  ", "", "\n"]
    heads = ["from", "import", "# from", "xfrom"]
    modules = ["tensorflow", "tensorflow.contrib", "tensorflow.compat.v1", "tensorflow.train", "tensorflowx", "tensorflow.contrib.slim"]
    tails = ["import", "as tf", "as tf1", "import (", ""]
    names = ["Session", "AdamOptimizer", "keras", "float32, Session", "slim", "x,\n Session)", "Checkpoint"]

    def line() -> str:
        return "".join(rng.choice(options) for options in (blank, heads, gap, modules, gap, tails, gap, names)) + "\n"

    texts = ["".join(line() for _ in range(rng.randint(1, 3))) for _ in range(6000)]
    texts += [*TF1, *NOT_TF1, "from\ttensorflow\timport\t(\n Session)\n", "  import tensorflow.contrib.slim as slim\n",
              "\n\n  import tensorflow.compat.v1 as tf\n", "from tensorflow.train  import  (x,\n GradientDescentOptimizer)\n"]
    tf1 = 0
    for text in texts:
        if _CONTRIB_IMPORT.search(text) or _TF1_FROM_IMPORT.search(text):
            expected = True
        elif _COMPAT_IMPORT.search(text) or not _spells_tf1_only(text):
            expected = False
        else:
            expected = is_tf1_source(text)  # (the attribute walk; not what this test is about)
        assert is_tf1_source(text) == expected, text
        tf1 += expected
    assert 100 < tf1 < len(texts) - 100
