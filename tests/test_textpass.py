"""The engine's shortcuts (ast pre-pass, rule triggers, the TFM101 text fast path, import-removal
filtering) must give byte for byte what the plain LibCST pipeline gives: on every fixture, on a
generated TF1 corpus, and on cases picked to hit each fallback."""

from __future__ import annotations

import ast
import re
import importlib.util
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from conftest import ROOT, fixture_id, fixture_pairs
from tfmigrate.cst_on_demand import cst as codemod_cst  # (what the codemod reads LibCST through)
from tfmigrate.engine import reference_transform, transform_source
from tfmigrate.names import AliasTable, SourceLines
from tfmigrate.parsing import index_by_type, reparse_edited
from tfmigrate.textpass import SourceView

PAIRS = fixture_pairs()


def _corpus_module():
    spec = importlib.util.spec_from_file_location("tf1_corpus", ROOT / "benchmarks" / "tf1_corpus.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _same(source: str, name: str = "<string>") -> None:
    fast = transform_source(source, filename=name)
    slow = reference_transform(source, filename=name)
    assert fast.output == slow.output
    assert fast.rules == slow.rules
    assert [t.as_dict() for t in fast.todos] == [t.as_dict() for t in slow.todos]
    # Which rule changed which lines (`--check`, reports): TODO-only passes included.
    assert [c.as_dict() for c in fast.changes] == [c.as_dict() for c in slow.changes]
    assert (fast.error and fast.error.as_dict()) == (slow.error and slow.error.as_dict())


def _same_table(source: str) -> None:
    from_cst = AliasTable.from_module(cst.parse_module(source))
    from_ast = AliasTable.from_ast(ast.parse(source), SourceLines(source))
    assert from_ast == from_cst
    assert list(from_ast.aliases.items()) == list(from_cst.aliases.items())


def test_a_respelled_chain_keeps_its_parentheses_and_the_comments_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain in parentheses of its own is respelled inside them, on the text path (no LibCST
    parse) and on LibCST's (which gives the new node the old one's parentheses): the line breaks
    and comments inside stay, as everywhere else in the file."""
    import tfmigrate.engine as engine

    source = (
        "import tensorflow as tf\nx = (\n    tf.OptimizerOptions.ON_1)\nz = f((tf.GraphKeys.LOSSES), (\n  # note\n"
        "  tf.GraphKeys.LOSSES))\n(tf.logging.info)('x')\nc = (tf.contrib.tpu.RunConfig)(\n  # the config\n  master='')\n"
        "k = (  # per host\n  tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2)\n"
    )
    expected = (
        "import tensorflow as tf\nimport tfmigrate.runtime as tfm\nfrom absl import logging\n\n"
        "x = (\n    tf.compat.v1.OptimizerOptions.ON_1)\nz = f((tf.compat.v1.GraphKeys.LOSSES), (\n  # note\n"
        "  tf.compat.v1.GraphKeys.LOSSES))\n(logging.info)('x')\nc = (tfm.RunConfig)(\n  # the config\n  master='')\n"
        "k = (  # per host\n  'PER_HOST_V2')\n"
    )
    assert reference_transform(source).output == expected
    parses: list[str] = []
    real_parse = engine.cst.parse_module
    monkeypatch.setattr(engine.cst, "parse_module", lambda text, *a, **k: parses.append(text) or real_parse(text, *a, **k))
    assert transform_source(source).output == expected
    assert parses == []


@pytest.mark.parametrize("case", PAIRS, ids=[fixture_id(p) for p in PAIRS])
def test_fixture_fast_equals_reference(case: Path) -> None:
    source = case.read_text(encoding="utf-8")
    _same(source, str(case))
    _same_table(source)
    # ... and on the migrated file (the idempotency run: TODOs already there).
    _same(transform_source(source).output, str(case))


@pytest.mark.slow  # about 90 s (the reference pipeline): scheduled first in a parallel run
def test_generated_corpus_fast_equals_reference_and_is_idempotent(tmp_path: Path) -> None:
    corpus = _corpus_module()
    corpus.write_corpus(tmp_path, files=36, seed=3, lines_per_file=120)
    for path in sorted(tmp_path.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        _same(source, str(path))
        _same_table(source)
        once = transform_source(source).output
        _same(once, str(path))
        assert transform_source(once).output == once, f"{path.name} is not idempotent"


CASES = {
    "a TODO and nothing else": "import tensorflow as tf\n\n\ndef f():\n    return tf.contrib.memory_stats.BytesInUse()\n",
    "feature-column layers outside a model_fn": (
        "import tensorflow as tf\n\n\ndef features(x, columns):\n    return tf.feature_column.input_layer(x, columns)\n\n\n"
        "def logits(x, columns):\n    net = tf.feature_column.linear_model(x, columns); return net\n"
    ),
    "both feature-column layers in one statement": (
        "import tensorflow as tf\ny = tf.feature_column.linear_model(tf.feature_column.input_layer(x, c), c)\n"
    ),
    "parenthesised chain": "import tensorflow as tf\nx = (tf.gfile.Exists)('a')\ny = (tf.gfile.Exists('b'))\n",
    "call paren": "import tensorflow as tf\nx = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\nif (tf.gfile.Exists):\n  pass\n",
    "chain with spaces": "import tensorflow as tf\nx = tf . gfile.Exists('a')\ny = (tf.\n  gfile.Exists)\n",
    "comment after chain": "import tensorflow as tf\nx = (tf.gfile.Exists  # c\n)\n",
    "one-line suites": "import tensorflow as tf\nif True: tf.logging.info('x')\nfor i in []: tf.gfile.Exists(i); tf.logging.info('y')\n",
    "semicolons": "import tensorflow as tf\nx = 1; tf.logging.info('x')\n",
    "decorated": "import tensorflow as tf\n\n@tf.contrib.framework.add_arg_scope\n@other\ndef f(x=tf.placeholder(tf.float32)):\n  return x\n",
    "elif and except": (
        "import tensorflow as tf\nif a:\n  pass\nelif tf.gfile.Exists('x'):\n  pass\n"
        "try:\n  pass\nexcept tf.errors.OpError:\n  tf.logging.info('e')\n"
    ),
    "f-string": "import tensorflow as tf\nprint(f'{tf.gfile.Exists(1)} {tf.logging.info}')\n",
    "first statement todo": "tf.logging.info('x')\nimport tensorflow as tf\n",
    "existing todos": (
        "import tensorflow as tf\n\n\ndef f():\n  # note\n  # TODO(tfmigrate TFM101): `tf.compat.v1.logging.info` has no TF2 equivalent; rewrite this without it\n"
        "  tf.logging.info('x')\n  # TODO(tfmigrate TFM101): something else\n  tf.logging.info('y')\n"
    ),
    "todo at another indent": (
        "import tensorflow as tf\nif x:\n  y = 1\n  # TODO(tfmigrate TFM101): `tf.compat.v1.logging.info` has no TF2 equivalent; rewrite this without it\n"
        "tf.logging.info('x')\n"
    ),
    "tf1 alias removed": "import numpy as np\nimport tensorflow.compat.v1 as tf1\n\nx = tf1.nn.relu(np.ones(3))\n",
    "tf1 alias dropped": "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1  # v1\n\ndef f():\n  return tf1.ConfigProto()\n",
    "tf1 alias dropped below comment": "import tensorflow as tf\n# the v1 API\nimport tensorflow.compat.v1 as tf1\nx = tf1.ConfigProto()\n",
    "tf1 alias in a string": "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\nx = tf1.ConfigProto()\n__all__ = ['tf1']\n",
    "tf1 alias dropped, absl added": "import os\nimport tensorflow as tf\nimport tensorflow.compat.v1 as tf1  # v1\n\ntf.logging.info('x')\nx = tf1.ConfigProto()\n",
    "tf1 alias dropped below comment, absl added": "import tensorflow as tf\n# v1\nimport tensorflow.compat.v1 as tf1\ntf.logging.info('x')\nx = tf1.ConfigProto()\n",
    "two v1 aliases dropped, absl added": (
        "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\nimport tensorflow.compat.v1 as v1\n"
        "FLAGS = tf.flags.FLAGS\nx = tf1.ConfigProto(v1.GraphOptions())\n"
    ),
    "two v1 aliases unused, absl added": (
        "import tensorflow as tf\nimport tensorflow.compat.v1 as tfv1\nimport tensorflow.compat.v1 as tf1\n"
        "FLAGS = tf.flags.FLAGS\nx = tf1.ConfigProto(tfv1.GraphOptions())\n"
    ),
    "v1 alias named in a comment, absl added": "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n# tf1 is gone\ntf.logging.info(tf1.ConfigProto())\n",
    "tf1 alias kept": "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n\nx = tf1.nn.relu(tf1)\n",
    "tf1 alias shadowed": "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n\ndef f(tf1):\n  return tf1\nx = tf1.nn.relu(1)\n",
    "unused from-import": "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\n\nx = tf.gfile.Exists('a')\n",
    "used from-import": "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\n\nx = tf.gfile.Exists(array_ops)\n",
    "logging bound in a comprehension": "import tensorflow as tf\nx = [logging for logging in range(3)]\ntf.logging.info('x')\n",
    "logging a lambda's parameter": "import tensorflow as tf\nf = lambda logging: logging\ntf.logging.info('x')\n",
    "logging bound by with and global": (
        "import tensorflow as tf\n\n\ndef f():\n  global logging\n  with open('x') as logging:\n    tf.logging.info('x')\n"
    ),
    "logging a match capture": "import tensorflow as tf\nmatch 1:\n  case logging:\n    tf.logging.info('x')\n",
    "logging a nested def and class attribute": (
        "import tensorflow as tf\n\n\nclass C:\n  logging = 1\n\n  def logging2(self):\n    def logging():\n      pass\n"
        "    tf.logging.info('x')\n"
    ),
    "logging and absl_logging both bound": (
        "import tensorflow as tf\n\n\ndef f(logging, absl_logging):\n  tf.logging.info('x')\n"
    ),
    "flags chains read off FLAGS": (
        "import tensorflow as tf\ntf.app.flags.DEFINE_integer('n', 1, 'n')\nx = tf.app.flags.FLAGS.n + tf.flags.FLAGS.n\n"
    ),
    "names neither TF 1.x nor TF2 has": (
        "import tensorflow.compat.v1 as tf\nm = tf.merge_all_summaries()\nw = tf.train.SummaryWriter(d)\nx = tf.test.mock.MagicMock()\n"
    ),
    "names neither TF 1.x nor TF2 has, TF 1.x program": (
        "import tensorflow as tf\ns = tf.Session()\nm = tf.merge_all_summaries()\nx = tf.test.mock.patch.object\n"
    ),
    "unused imports of other tensorflow_* packages": (
        "import tensorflow as tf\nfrom tensorflow.contrib import lookup\nfrom tensorflow_transform.saved import saved_transform_io\n"
        "import tensorflow_hub as hub\nfrom tensorflow_hub import module\n\ntable = lookup.index_table_from_tensor(['a'])\n"
    ),
    "from-import in function": "import tensorflow as tf\n\ndef f():\n  from tensorflow.python.ops import array_ops\n  return array_ops.x, tf.gfile.Exists('a')\n",
    "compat v1 only from-import": "from tensorflow.compat.v1 import gfile\n\ngfile.Exists('x')\n",
    "v1 import renamed": "import tensorflow.compat.v1 as tf\n\ntf.gfile.Exists('x')\n",
    "import inside one-line suite": "try: import tensorflow.compat.v1 as tf\nexcept ImportError: tf = None\nx = tf.gfile.Exists('x')\n",
    "contrib import": "import tensorflow\nimport tensorflow.contrib.slim as slim\nx = tensorflow.gfile.Exists('a')\n",
    "keras and modules": "import tensorflow.compat.v1 as tf\nx = tf.keras.layers.Dense(3)\ny = tf.nn\nz = tf.logging\n",
    # Import removal read from `symtable` (import_removal.remove_unused_top_level_imports) vs LibCST's scopes.
    "one alias of two used, the other asked last": (
        "import tensorflow as tf\nimport tensorflow.compat.v1 as tfv1\nimport tensorflow.compat.v1 as tf1\n"
        "x = tf1.ConfigProto(tfv1.GraphOptions())\ndef f():\n  return tf1\n"
    ),
    "unused import next to a try-import read in a function": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\ntry:\n  from tensorflow.python.ops import math_ops\n"
        "except ImportError:\n  math_ops = None\nx = tf.gfile.Exists('a')\ndef f():\n  return math_ops\n"
    ),
    # `from tensorflow.contrib... import` on the text path (TFM101's leave_ImportFrom / leave_Name).
    "contrib from-imports: kept, runtime-replaced, respelled lone names": (
        "import tensorflow as tf\nfrom tensorflow.contrib.training import HParams\n"
        "from tensorflow.contrib.framework import arg_scope\nfrom tensorflow.contrib import layers as contrib_layers\n"
        "from tensorflow.contrib.tpu import TPUEstimator\n"
        "hp = HParams(a=1)\nwith arg_scope([contrib_layers.conv2d]):\n  x = contrib_layers\ny = [arg_scope, (arg_scope)]\n"
        "def f(contrib_layers=contrib_layers):\n  del contrib_layers\nz = tf.gfile.Exists(TPUEstimator)\n"
    ),
    "contrib local bound again by a def": (
        "import tensorflow as tf\nfrom tensorflow.contrib import layers\ndef layers():\n  return tf.gfile.Exists(layers)\n"
    ),
    "contrib local named again by a method and a class": (
        "import tensorflow as tf\nfrom tensorflow.contrib.tpu.python.tpu import device_assignment\n"
        "class A:\n  def device_assignment(self):\n    return device_assignment.device_assignment(1)\n"
        "  class device_assignment:\n    pass\nx = tf.gfile.Exists(A)\n"
    ),
    "TF1 flags, logging and app modules imported by name": (
        "import os\nfrom tensorflow import flags\nfrom tensorflow import logging as tf_logging  # log\n"
        "from tensorflow.compat.v1 import app\nflags.DEFINE_string('a', None, 'h')\ntf_logging.info(os.sep)\napp.run()\n"
    ),
    "TF1 flags module imported beside other names": (
        "import os\nfrom tensorflow import flags, float32\nflags.DEFINE_string('a', None, 'h')\nx = float32\n"
    ),
    "contrib import in a function, one of its names respelled away": (
        "import tensorflow as tf\ndef f(x):\n  from tensorflow.contrib import seq2seq as s2s, rnn as contrib_rnn\n"
        "  return s2s.dynamic_decode(x), contrib_rnn.LSTMCell(3)\n"
    ),
    "TF1 functions imported by name": (
        "from tensorflow import placeholder, float32, nn\nfrom tensorflow.train import AdamOptimizer as Adam\n"
        "x = nn.relu(placeholder(float32))\nopt = Adam(0.1)\n"
    ),
    "a Session program's main block and a graph built at import": (
        "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n\nif __name__ == '__main__':\n  # run\n"
        "  with tf.Session() as s:\n    print(s.run(x, {x: 1.0}))\n"
    ),
    "a Session program's main block": (
        "import tensorflow as tf\ndef main(_):\n  with tf.Session() as s:\n    s.run(tf.no_op())\n"
        "if __name__ == '__main__':  # entry\n\n    tf.app.run()\n"
    ),
    "contrib local in an f-string": "import tensorflow as tf\nfrom tensorflow.contrib import layers\nx = f'{layers}' + tf.gfile.Exists('a')\n",
    "contrib import in a function": (
        "import tensorflow as tf\ndef f():\n  from tensorflow.contrib import slim\n  return slim, tf.gfile.Exists(slim.conv2d)\n"
    ),
    # Chains LibCST replaces whole: whitespace inside dropped, their own parentheses kept with
    # what is inside them (line breaks, comments).
    "chains beside comments and line breaks": (
        "import tensorflow as tf\nk = tf.GraphKeys  # keys\nx = f(a,\n      tf.GraphKeys.GLOBAL_STEP)\n"
        "y = (tf.GraphKeys.LOSSES  # c\n     )\nz = (tf.layers.\n     dense)(1)\nif (\n    tf.GraphKeys.LOSSES):\n  pass\n"
        "w = g(  # c\n    tf.python_io.TFRecordCompressionType.GZIP)\nv = [tf.contrib.\n     layers.xavier_initializer]\n"
    ),
    "parenthesised chains of every text pass, comments inside kept": (
        "import tensorflow as tf\nx = (\n    tf.OptimizerOptions.ON_1)\ny = ( tf.gfile.Exists )('a')  # c\n"
        "z = f((tf.GraphKeys.LOSSES), (\n  # note\n  tf.GraphKeys.LOSSES))\nFLAGS = (tf.flags.FLAGS)\n"
        "(tf.logging.info)('x')\nc = (tf.contrib.tpu.RunConfig)(\n  # the config\n  master='')\n"
        "k = (tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2)\nit = (ds.make_one_shot_iterator())  # one\n"
        "sh = (\n  ds.output_shapes)\n"
    ),
    # `ds.output_types` -> `tf.compat.v1.data.get_output_types(ds)` (TFM101's leave_Attribute): a
    # head before the value and `)` for the tail, respellings inside the value kept.
    "dataset attribute reads": (
        "import tensorflow as tf\nt = ds.output_types\ns = (ds.output_shapes)\nc = f(x).output_classes\n"
        "u = (a + b).output_types\nv = tf.data.make_one_shot_iterator(ds).output_shapes\n"
        "x = g(ds .  output_types, it.output_shapes[0])\n"
        "y = self.output_types, cls.output_shapes\nds.output_shapes[0] = 2\n"
        "a.output_classes += 1\nfor it.output_types in z:\n  del ds.output_shapes\n"
        "with c() as (ds.output_types, q):\n  tf.logging.info(ds.output_types)\n"
        "def h(ds=tf.data.Dataset.range(3)):\n  return tf.data.Dataset.output_types, ds.output_types\n"
    ),
    "dataset attribute read nested in another": "import tensorflow as tf\nt = it.output_types.output_shapes\n",
    "dataset attribute read inside a chain": (
        "import tensorflow as tf\nshapes = [s for _, s in ds.output_shapes.items()]\nds.output_types.x = 1\n"
        "y = self.output_types.x, tf.data.output_types.x\n"
    ),
    "dataset attribute read after a line break": "import tensorflow as tf\nt = (ds\n     .output_types)\n",
    "dataset attribute read after a comment": "import tensorflow as tf\nt = (ds  # c\n     .output_types)\n",
    "dataset attribute read in an f-string": "import tensorflow as tf\nt = f'{ds.output_types}'\n",
    "dataset attribute defined by the module": (
        "import tensorflow as tf\nclass D:\n  def output_types(self):\n    return 1\nt = ds.output_types\n"
    ),
    "dataset attribute read beside an iterator call": (
        "import tensorflow as tf\nt = ds.make_initializable_iterator().output_types\nu = tf.gfile.Exists(ds.output_shapes)\n"
    ),
    "unused imports cut whole, with their comments": (
        "import tensorflow as tf\n\n# slim, for layers\nimport tensorflow.contrib.slim as slim  # noqa\n"
        "from tensorflow.python.ops import array_ops, math_ops\nx = tf.gfile.Exists('a')\n"
    ),
    "unused import in a try block": (
        "import tensorflow as tf\n# c\ntry:\n  # c2\n  from tensorflow.python.ops import array_ops  # t\n"
        "  # after\nexcept ImportError:\n  array_ops = None\n  # footer\nx = tf.gfile.Exists('a')\n"
    ),
    "unused imports in top-level blocks, below other statements: cut with their lines": (
        "import warnings\nwith warnings.catch_warnings():\n  warnings.simplefilter('ignore')\n\n  import os\n"
        "  # the contrib lookup\n  from tensorflow.contrib import lookup  # t\n\n  import tensorflow as tf\n"
        "if os.name:\n  x = 1\n  with open('f'):\n    y = 2\n    from tensorflow.python.ops import array_ops\n"
        "  # between\nelse:\n  x = 2\n  from tensorflow.contrib import slim\n  # footer\n"
        "try:\n  z = 3\n  from tensorflow.python.ops import math_ops, array_ops as ao\nexcept ImportError:\n  pass\n"
        "finally:\n  w = 4\n  from tensorflow.python.ops import nn_ops\nx = tf.gfile.Exists('a')\n"
    ),
    "unused imports in top-level blocks the visitor must take": (
        "import tensorflow as tf\nwith ctx():\n  from tensorflow.contrib import lookup\n  y = 1\n"
        "if a:\n  for i in b:\n    pass\n  from tensorflow.python.ops import array_ops\n"
        "try:\n  v = 1\n  from tensorflow.python.ops import math_ops, nn_ops\nexcept ImportError:\n  pass\n"
        "with ctx():\n  q = 1; from tensorflow.python.ops import state_ops\n"
        "with ctx():\n  r = 1\n  from tensorflow.python.ops import gen_ops  # kept below\n  from tensorflow.contrib import slim\n"
        "x = tf.gfile.Exists(math_ops)\n"
    ),
    "import in a function read by a nested function": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import math_ops\nx = tf.gfile.Exists('a')\n"
        "def f():\n  from tensorflow.python.ops import array_ops\n  def g():\n    return array_ops.x\n  return g\n"
    ),
    "imports in functions respelled away: cut with their lines, or the visitor's where it must": (
        'import tensorflow as tf\n'
        'def summary():\n'
        '  """Doc."""\n'
        '\n'
        '  # the contrib summary\n'
        '  from tensorflow.contrib import summary as contrib_summary  # c\n'
        '  return contrib_summary\n'
        'def metrics():\n'
        '  x = 1\n'
        '  from tensorflow.contrib import metrics as contrib_metrics\n'
        '  y = 2\n'
        '  return contrib_metrics\n'
        'def first():\n'
        '  from tensorflow.contrib import summary as contrib_summary\n'
        '  return contrib_summary\n'
        'def after_if():\n'
        '  if x:\n'
        '    pass\n'
        '  # c\n'
        '  from tensorflow.contrib import metrics as contrib_metrics\n'
        '  return contrib_metrics\n'
        'class A:\n'
        '  def m(self):\n'
        '    z = 1\n'
        '    from tensorflow.contrib import summary as contrib_summary\n'
        '    return contrib_summary\n'
        'def nested():\n'
        '  def inner():\n'
        '    q = 1; from tensorflow.contrib import summary as contrib_summary\n'
        '    return contrib_summary\n'
        '  return inner\n'
        "x = tf.gfile.Exists('a')\n"
    ),
    "import in a function, unused there": (
        "import tensorflow as tf\nx = tf.gfile.Exists('a')\ndef f():\n  from tensorflow.python.ops import array_ops\n  return 1\n"
    ),
    "import read only at module level before it": (
        "import tensorflow as tf\nprint(array_ops)\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists('a')\n"
    ),
    "import read by a class before its own binding": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists('a')\n"
        "class A:\n  y = array_ops\n  array_ops = 1\n"
    ),
    "import read by a function before its own binding": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists('a')\n"
        "def f():\n  y = array_ops\n  array_ops = 1\n"
    ),
    "import shadowed by a parameter": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists('a')\n"
        "def f(array_ops):\n  return array_ops\n"
    ),
    "import named in an annotation string": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists('a')\n"
        "def f(a: 'array_ops.X'):\n  return a\n"
    ),
    "import named in __all__": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\n__all__ = ['array_ops']\nx = tf.gfile.Exists('a')\n"
    ),
    "import named in a docstring": (
        '"""Uses array_ops."""\nimport tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists(\'a\')\n'
    ),
    "global read in a nested function, free read elsewhere": (
        "import tensorflow as tf\nfrom tensorflow.python.ops import array_ops\nx = tf.gfile.Exists('a')\n"
        "def f():\n  def g():\n    return array_ops\n  return g\ndef h():\n  array_ops = 2\n  return lambda: array_ops\n"
    ),
    "dataset iterator methods": (
        "import tensorflow as tf\nit = ds.make_one_shot_iterator()\nx = f(d.batch(\n  2).make_initializable_iterator()).get_next()\n"
        "y = (ds).make_one_shot_iterator()\nz = (ds.make_one_shot_iterator())\nw = a.make_one_shot_iterator().b.make_one_shot_iterator()\n"
        "v = g(tf.train.get_global_step()).make_one_shot_iterator()\nu = ds.make_one_shot_iterator( )\nt = f'{ds.make_one_shot_iterator()}'\n"
    ),
    "estimator imports kept and rewritten": (
        "import tensorflow as tf\nfrom tensorflow_estimator.python.estimator import model_fn as model_fn_lib\n"
        "from tensorflow_estimator.python.estimator import run_config\nfrom tensorflow.python.estimator.model_fn import ModeKeys\n"
        "from  tensorflow.estimator  import RunConfig\nx = model_fn_lib.EstimatorSpec(ModeKeys.TRAIN, RunConfig)\ny = tf.gfile.Exists('a')\n"
    ),
    "estimator imports in functions, with comments and semicolons": (
        "import tensorflow as tf\nfrom tensorflow_estimator.python.estimator import util  # c\ndef f():\n"
        "  from tensorflow_estimator.python.estimator import util as u2\n  return u2.x\nx = util.fn_args(tf.gfile.Exists)\n"
        "from tensorflow_estimator.python.estimator import export; y = export\n"
    ),
    "contrib module imported as an alias and used": "import tensorflow as tf\nimport tensorflow.contrib.slim as slim\nx = slim.conv2d(tf.gfile.Exists)\n",
    "non-ascii": "import tensorflow as tf\n\ns = 'héllo wörld'; t = tf.gfile.Exists(s)\nu = 'ü' + str(tf.gfile.Exists('ä'))\n",
    "crlf": "import tensorflow as tf\r\nx = tf.gfile.Exists('a')\r\ntf.logging.info('b')\r\n",
    "estimator": textwrap.dedent(
        """\
        import tensorflow as tf
        config = tf.estimator.tpu.RunConfig(model_dir='x')
        tf.logging.info('x')
        """
    ),
    "config names imported": (
        "from tensorflow.compat.v1.estimator.tpu import RunConfig, InputPipelineConfig\n"
        "c = RunConfig(model_dir='x')\nm = InputPipelineConfig.PER_HOST_V2\nn = (RunConfig)(c)\n"
    ),
    "config chain under attribute": "import tensorflow as tf\nc = tf.estimator.tpu.RunConfig(model_dir='x').replace(a=1)\n",
    "config chains across lines": (
        "import tensorflow as tf\nc = tf.estimator.tpu.TPUConfig(per_host_input_for_training=tf.estimator.tpu.InputPipelineConfig\n"
        "    .BROADCAST, other=tf.estimator.tpu . InputPipelineConfig.  # why\n  PER_HOST_V2, x=(tf.estimator.tpu\n"
        "  .InputPipelineConfig.SLICED), y=tf.estimator.tpu.InputPipelineConfig.PER_HOST_V1.value)\n"
        "r = tf.estimator.tpu.RunConfig(\n  model_dir='x', tpu_config=c)\nq = (tf.estimator.\n   tpu.RunConfig)(c)\n"
        "p = tf.estimator.tpu.InputPipelineConfig\\\n    .PER_HOST_V2.value + [tf.estimator.tpu.InputPipelineConfig\n  .SLICED.name]\n"
    ),
    "tf1 only, docstring": '"""Doc."""\nfrom __future__ import print_function\nimport tensorflow.compat.v1 as tf1\n# lead\nX = tf1.gfile.Exists(\'a\')\n',
    "tf1 only, imports only": "import os\nimport tensorflow.compat.v1 as tf1\n",
    "tf1 only, use after imports": "import os\nimport tensorflow.compat.v1 as tf1\nx = tf1.logging.info('x'); y = tf1.gfile.Exists('a')\n",
    "syntax error": "import tensorflow as tf\nx = (\n",
    "tabs": "import tensorflow as tf\nif x:\n\ttf.logging.info('a')\n\tif y:\n\t\ttf.logging.info('b')\n",
    "class body": "import tensorflow as tf\nclass A(tf.keras.Model):\n  x = tf.placeholder(tf.float32)\n  def f(self):\n    return tf.gfile.Exists('a')\n",
    "lambda and comprehension": "import tensorflow as tf\nf = lambda: [tf.to_float(v) for v in tf.trainable_variables() if tf.gfile.Exists(v)]\n",
    "dict and ifexp order": "import tensorflow as tf\nd = {tf.logging.info: tf.placeholder, 1: tf.logging.warn if x else tf.placeholder}\n",
    # `alias = tf.contrib.X`: deleted where nothing mentions it after the respelling (TFM101).
    "dead module alias": (
        "import tensorflow as tf\nslim = tf.contrib.slim\nlayers = tf.contrib.layers\n\n\n"
        "def f(x):\n  net = slim.conv2d(x, 3, [3, 3])\n  return layers.flatten(slim.max_pool2d(net, [2, 2]))\n"
    ),
    "module alias still used": (
        "import tensorflow as tf\nslim = tf.contrib.slim\nlayers = tf.contrib.layers\n"
        "net = slim.conv2d(x, 3, [3, 3])\nf(slim)\ny = layers.nonexistent_thing(net)\n"
    ),
    "module alias named in a comment, a keyword and a parameter": (
        "import tensorflow as tf\nslim = tf.contrib.slim  # slim layers\nnet = slim.conv2d(x, 3, [3, 3])\n"
        "g(slim=1)\n\n\ndef h(slim):\n  return slim\n"
    ),
    "module alias below a blank line, sharing a line, exported": (
        "import tensorflow as tf\n__all__ = ['layers']\n\nslim = tf.contrib.slim\nlayers = tf.contrib.layers; x = 1\n"
        "net = slim.conv2d(x, 3, [3, 3])\nnet = layers.flatten(net)\n"
    ),
    # TFM102's LibCST pass drops the `flags = flags` its rewrite leaves, not one the program wrote.
    "a self-assignment the program wrote": (
        "import tensorflow as tf\n\n\ndef f(keras_model):\n  tf.compat.v1.logging.info('x')\n"
        "  keras_model = keras_model\n  return keras_model\n"
    ),
    "a self-assignment beside a flags alias": (
        "import tensorflow as tf\nflags = tf.app.flags\nFLAGS = flags.FLAGS\nflags.DEFINE_string('a', 'b', 'c')\nx = 1\nx = x\n"
    ),
    "module alias of an imported name": (
        "import tensorflow as tf\nfrom tensorflow.contrib import slim as contrib_slim\n\nslim = contrib_slim\n"
        "net = slim.conv2d(x, 3, [3, 3])\n"
    ),
    "dead module alias on the last line, no final line break": "import tensorflow as tf\nx = tf.placeholder(tf.float32)\nslim = tf.contrib.slim",
    "unused import on the last line, no final line break": (
        "import tensorflow as tf\nx = tf.placeholder(tf.float32)\nimport tensorflow.contrib.slim as slim"
    ),
    # `from` imports of modules current TF lacks that nothing reads: dropped (leave_Module), kept
    # with a TODO where the module keeps its unused imports, one read kept with its TODO.
    "unread removed-module imports": (
        "import tensorflow.compat.v1 as tf\n"
        "from tensorflow.contrib import cluster_resolver as contrib_cluster_resolver\n"
        "from tensorflow.contrib import tpu as contrib_tpu\n\n\n"
        "def main():\n  return tf.nn.relu\n"
    ),
    "unread removed-module imports kept for other modules": (
        "# pylint: disable=unused-import\n"
        "import tensorflow.compat.v1 as tf\n"
        "from tensorflow.contrib import tpu as contrib_tpu\n"
        "from tensorflow_estimator.python.estimator import model_fn as model_fn_lib\n\n\n"
        "def main():\n  return tf.nn.relu\n"
    ),
    "removed-module imports one read one not": (
        "import tensorflow.compat.v1 as tf\n"
        "from tensorflow.contrib import tpu as contrib_tpu, training as contrib_training\n\n"
        "hparams = contrib_training.HParams(a=1)\n"
    ),
}


# Estimator programs whose module-level defs the estimator rules' walks may skip (quiet ones)
# or must not: the fast pipeline hints which defs spell none of the symbols the rules react to.
_PROGRAM = (ROOT / "fixtures" / "TFM201_estimator_to_keras" / "custom_estimator_classifier.in.py").read_text(encoding="utf-8")
_MAIN_CALL = "\n\nif __name__ == '__main__':\n  main()\n"
_ESTIMATOR_EXTRAS = {
    "quiet helpers": "def model(x):\n  return tf.nn.relu(x)\n\n\ndef strategy():\n  return tf.layers.dense\n",
    "hook class after": (
        "class Hook(tf.train.SessionRunHook):\n  def before_run(self, run_context):\n"
        "    return tf.train.SessionRunArgs(tf.train.get_global_step())\n"
    ),
    "hook base imported by name": (
        "from tensorflow.compat.v1.train import SessionRunHook\n\n\nclass Hook(SessionRunHook):\n  pass\n"
    ),
    "receiver fn": (
        "def serving_input_receiver_fn():\n  x = tf.placeholder(tf.float32, [None, 4])\n"
        "  return tf.estimator.export.ServingInputReceiver({'measurements': x}, {'measurements': x})\n"
    ),
    "specs elsewhere": "def specs():\n  return tf.estimator.TrainSpec(train_input_fn), tf.estimator.EvalSpec(eval_input_fn)\n",
    "loose estimator": "def make():\n  return tf.estimator.Estimator(model_fn=my_model)\n",
    "graph mode switched on in a helper": (
        "def setup():\n  tf.compat.v1.disable_eager_execution()\n  return 1\n\n\n"
        "def setup_v1():\n  if True:\n    tf.disable_v2_behavior()\n"
    ),
    "uses of the model_fn": "def again():\n  return my_model(None, None, None, None), tf.nn.relu\n",
    "module-level estimator": (
        "est = tf.estimator.Estimator(model_fn=my_model, params={'n_classes': 3, 'learning_rate': 0.1})\n\n\n"
        "def later():\n  est.train(input_fn=train_input_fn, steps=2)\n  return tf.nn.relu\n"
    ),
}


@pytest.mark.parametrize("name", sorted(_ESTIMATOR_EXTRAS))
def test_estimator_program_with_quiet_defs_fast_equals_reference(name: str) -> None:
    program = _PROGRAM.replace(_MAIN_CALL, "\n\n" + _ESTIMATOR_EXTRAS[name] + _MAIN_CALL)
    assert program != _PROGRAM
    _same(program)
    _same(transform_source(program).output)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_fast_equals_reference(name: str) -> None:
    source = CASES[name]
    _same(source)
    try:
        cst.parse_module(source)
        ast.parse(source)
    except (SyntaxError, cst.ParserSyntaxError):
        return
    _same_table(source)
    _same(transform_source(source).output)


@pytest.mark.parametrize("transform", [transform_source, reference_transform])
def test_unused_imports_of_other_tensorflow_packages_stay(transform) -> None:
    """Only TensorFlow's own imports (and its Estimator package's) are dropped when unused:
    `tensorflow_transform`, `tensorflow_hub` are other packages, whose imports may register what
    the program needs, and the migration made none of them unused."""
    source = (
        "import tensorflow as tf\n"
        "with ctx():\n"
        "  from tensorflow.contrib import lookup\n"
        "  from tensorflow_transform.saved import saved_transform_io\n"
        "  from tensorflow_hub import module\n"
        "from tensorflow_datasets.core import registered\n"
        "from tensorflow.python.ops import array_ops\n"
        "\n"
        "table = lookup.index_table_from_tensor(['a'])\n"
    )
    output = transform(source).output
    assert "lookup.index_table_from_tensor" in output and "from tensorflow.contrib import lookup" not in output
    assert "from tensorflow.python.ops import array_ops" not in output  # TensorFlow's own, unused: dropped as before
    for kept in ("from tensorflow_transform.saved import saved_transform_io", "from tensorflow_hub import module",
                 "from tensorflow_datasets.core import registered"):
        assert kept in output


def test_feature_column_layers_where_no_column_changes_run_as_written_without_a_cst_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """`input_layer`/`linear_model` in a file that builds no estimator: its columns stay TF's, so
    the calls run as written (TF1 graph mode, the hosted tier) and get no TODO (a file whose
    columns become the runtime's keeps it: the next test)."""
    source = CASES["feature-column layers outside a model_fn"]
    expected = reference_transform(source)
    assert expected.todos == [] and "TFM401" not in expected.rules
    assert "tf.compat.v1.feature_column.input_layer(x, columns)" in expected.output
    monkeypatch.setattr(codemod_cst, "parse_module", lambda *args, **kwargs: pytest.fail("a CST pass"))
    result = transform_source(source)
    assert result.output == expected.output
    assert [c.as_dict() for c in result.changes] == [c.as_dict() for c in expected.changes]


def test_unread_removed_module_imports_go_without_a_cst_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """tensorflow/tpu's `from tensorflow.contrib import tpu as contrib_tpu`, read by nothing once
    the estimator rules have rewritten its uses: the text pass drops it as leave_Module does."""
    source = CASES["unread removed-module imports"]
    expected = reference_transform(source)
    assert "contrib" not in expected.output and "TFM101" in expected.rules
    monkeypatch.setattr(codemod_cst, "parse_module", lambda *args, **kwargs: pytest.fail("a CST pass"))
    result = transform_source(source)
    assert result.output == expected.output and result.rules == expected.rules


def test_unused_imports_in_top_level_blocks_go_without_a_cst_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """cloudml-samples' preprocessing imports everything inside `with warnings.catch_warnings():`.
    An unused import below another statement of such a block is cut with its lines, as the
    visitor cuts it, without parsing the statement into a CST (57 ms a file, where the rest took 5)."""
    source = CASES["unused imports in top-level blocks, below other statements: cut with their lines"]
    expected = reference_transform(source)
    assert "lookup" not in expected.output and "slim" not in expected.output and "nn_ops" not in expected.output
    monkeypatch.setattr(codemod_cst, "parse_module", lambda *args, **kwargs: pytest.fail("a CST pass"))
    assert transform_source(source).output == expected.output


def test_dataset_attribute_reads_are_respelled_without_a_cst_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ds.output_types` and its kin read through `tf.compat.v1.data.get_output_types(ds)` on the
    text path, as leave_Attribute writes them (tensor2tensor's data readers took a CST pass for them)."""
    source = CASES["dataset attribute reads"]
    expected = reference_transform(source)
    assert "tf.compat.v1.data.get_output_types(ds)" in expected.output
    assert "u = tf.compat.v1.data.get_output_types((a + b))" in expected.output
    monkeypatch.setattr(codemod_cst, "parse_module", lambda *args, **kwargs: pytest.fail("a CST pass"))
    result = transform_source(source)
    assert result.output == expected.output and result.rules == expected.rules
    assert [c.as_dict() for c in result.changes] == [c.as_dict() for c in expected.changes]


def test_dead_module_alias_goes_without_a_cst_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """`slim = tf.contrib.slim` whose every use TFM101 respells away from `slim` is deleted on the
    text path, as the CST pass deletes it; one still used stays (both without a CST pass)."""
    dead, used = CASES["dead module alias"], CASES["module alias still used"]
    expected = [reference_transform(source) for source in (dead, used)]
    assert "slim = " not in expected[0].output and "layers = " not in expected[0].output
    assert "slim = " in expected[1].output and "layers = " in expected[1].output
    monkeypatch.setattr(codemod_cst, "parse_module", lambda *args, **kwargs: pytest.fail("a CST pass"))
    for source, want in zip((dead, used), expected):
        result = transform_source(source)
        assert result.output == want.output
        assert [c.as_dict() for c in result.changes] == [c.as_dict() for c in want.changes]


def _module_alias_program(rng) -> str:
    """A module built from the shapes `alias = tf.contrib.X` comes in: what stands above the
    alias (code, a blank line, a comment, a function), how it is spelled, and its uses (chains
    TFM101 respells, ones it keeps, the bare name, the word in a comment, a string, a keyword, an
    f-string, an import)."""
    imports = ["import tensorflow as tf\n"]
    if rng.random() < 0.3:
        imports.append("from tensorflow.contrib import slim as contrib_slim\n")
    above = rng.choice(["x = 1\n", "\n", "# layers\n", "def g():\n  return 1\n", "", "y = 2  # slim\n"])
    spelled = rng.choice(["tf.contrib.slim", "(tf.contrib.slim)", "contrib_slim" if len(imports) > 1 else "tf.contrib.slim"])
    aliases = [f"slim = {spelled}" + rng.choice(["\n", "  # slim\n", "; z = 3\n"])]
    if rng.random() < 0.5:
        aliases.append(rng.choice(["layers = tf.contrib.layers\n", "\nlayers = tf.contrib.layers\n"]))
    uses = rng.sample([
        "net = slim.conv2d(x, 3, [3, 3])\n", "net = slim.max_pool2d(net, [2, 2])\n", "y = slim.nonexistent_thing(x)\n",
        "f(slim)\n", "# slim is tf-slim\n", "s = 'slim'\n", "g(slim=1)\n", "print(f'{slim.conv2d}')\n",
        "n = layers.flatten(x)\n", "m = layers.nonexistent_thing(x)\n", "\n\ndef h(x):\n  return slim.conv2d(x, 3, [3, 3])\n",
    ], rng.randint(0, 4))
    ending = rng.choice(["", "", "last = 1"])
    return "".join(imports) + above + "".join(aliases) + "".join(uses) + ending


def test_generated_module_alias_programs_fast_equals_reference() -> None:
    """TFM101's text path deletes a dead `alias = tf.contrib.X` only where it counts the alias's
    mentions as the CST pass does, and otherwise leaves the file to that pass: the same output,
    TODOs and changes on every generated program (and on its migrated output)."""
    import random

    rng = random.Random(7)
    seen = set()
    for _ in range(80):
        program = _module_alias_program(rng)
        if program in seen:
            continue
        seen.add(program)
        _same(program)
        _same(transform_source(program).output)


def _block_imports_program(rng) -> str:
    """A module whose top-level compound statements (`with`, `try`, `if`, loops, nested) hold
    imports a migration leaves unused, or half unused, or read: first in their block or below a
    simple or a compound statement, beside comments, blank lines, trailing comments and
    semicolons, at the block's end or above more code."""
    imports = [
        "from tensorflow.python.ops import array_ops", "from tensorflow.contrib import lookup", "import tensorflow.python.ops",
        "from tensorflow.python.ops import math_ops, nn_ops as nn", "from tensorflow.python.ops import state_ops  # t",
        "import os", "from tensorflow.contrib import slim",
    ]
    above = ["", "\n", "# the ops\n", "\n# c\n\n", "#~ dedented\n"]  # (`#~`: a comment at column 0)
    before = ["", "x = 1\n", "for i in r:\n  pass\n", "y = 2; z = 3\n", "if q:\n  w = 1\n# dedented\n"]
    after = ["", "", "v = 4\n", "# footer\n", "\n"]

    def block(depth: int) -> str:
        lines = rng.choice(before)
        for _ in range(rng.randint(1, 2)):
            lines += rng.choice(above) + rng.choice(imports) + rng.choice(["\n", "\n", "; u = 5\n"])
        if depth < 2 and rng.random() < 0.3:
            lines += compound(depth + 1)
        lines += rng.choice(after)
        if not lines.strip() or lines.lstrip().startswith("#") and not lines.strip("\n# abcdefghijklmnopqrstuvwxyz"):
            lines += "pass\n"
        return "".join(("  " + line if line.strip() else line) for line in lines.splitlines(keepends=True))

    def compound(depth: int) -> str:
        kind = rng.choice(["with", "try", "if", "for", "while"])
        if kind == "with":
            return rng.choice(["with ctx():\n", "with ctx():  # h\n", "with ctx(\n    a):\n"]) + block(depth)
        if kind == "try":
            tail = rng.choice(["except ImportError:\n" + block(depth), "finally:\n" + block(depth),
                               "except ImportError:\n  pass\nelse:\n" + block(depth)])
            return "try:\n" + block(depth) + tail
        if kind == "if":
            return "if a:\n" + block(depth) + rng.choice(["", "else:\n" + block(depth), "elif b:\n" + block(depth)])
        return ("for i in c:\n" if kind == "for" else "while c:\n") + block(depth) + rng.choice(["", "else:\n" + block(depth)])

    program = "import tensorflow as tf\n" + "".join(compound(0) + rng.choice(["", "\n", "k = 1\n"]) for _ in range(rng.randint(1, 3)))
    reads = rng.sample(["array_ops.x", "math_ops", "nn", "lookup", "slim.conv2d", "os.sep", "tf.gfile.Exists('a')"], rng.randint(1, 3))
    program += "r = f(" + ", ".join(reads) + ")\n" + rng.choice(["", "def g():\n  return state_ops\n"])
    return re.sub(r"^ *#~", "#", program, flags=re.M)


def test_generated_block_imports_fast_equals_reference() -> None:
    """Unused imports inside top-level blocks, cut on the text path where the visitor's result is
    sure (`import_removal`) and left to it otherwise: the same output, TODOs and changes as the
    LibCST path on every generated program."""
    seen, cut = _same_over_generated(_block_imports_program, 11, 80,
                                     lambda program, output: output.count(" import ") < program.count(" import "))
    assert len(seen) > 70 and cut > 40


def _same_over_generated(make, seed: int, draws: int, counted) -> tuple[set[str], int]:
    """`_same` over the distinct programs `make(rng)` draws (each parses); with how many of them
    `counted(program, output)` holds for."""
    import random

    rng = random.Random(seed)
    seen, hits = set(), 0
    for _ in range(draws):
        program = make(rng)
        if program in seen:
            continue
        seen.add(program)
        ast.parse(program)
        _same(program)
        hits += bool(counted(program, transform_source(program).output))
    return seen, hits


def test_feature_column_layers_in_a_file_whose_columns_become_the_runtimes_keep_their_todo() -> None:
    """A canned estimator in the file: its columns become `tfm.feature_columns`, which TF's
    `input_layer` rejects at run time, so the call beside it gets TFM401's TODO saying so."""
    source = (
        "import tensorflow as tf\n\ncolumns = [tf.feature_column.numeric_column('x')]\n\n\n"
        "def features(x):\n    return tf.feature_column.input_layer(x, columns)\n\n\n"
        "est = tf.estimator.LinearClassifier(feature_columns=columns)\n"
    )
    result = transform_source(source)
    assert result.output == reference_transform(source).output
    assert "columns = [tfm.feature_columns.numeric_column('x')]" in result.output
    assert [(t.code, t.line) for t in result.todos] == [("TFM401", 8)]
    assert "TF's `feature_column.input_layer` takes only TF's" in result.todos[0].message


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_scan_indexes_nodes_as_index_by_type_does(name: str) -> None:
    try:
        tree = ast.parse(CASES[name])
    except SyntaxError:
        return
    view = SourceView(CASES[name], tree)
    assert view.chains is not None  # the scan, which indexes the nodes as it walks
    expected = index_by_type(tree)
    assert set(view._by_type or ()) == set(expected)
    for kind, nodes in expected.items():
        assert [id(node) for node in view.nodes_of(kind)] == [id(node) for node in nodes], kind.__name__


def test_the_walks_skip_only_fields_that_never_hold_a_node() -> None:
    """`index_by_type` (and the scan, which reads the same field table) finds every node that
    `ast.walk` finds but contexts and operators (left out on purpose), over every fixture and
    case: the other fields they skip hold no node."""
    leaves = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.type_ignore)
    sources = [pair.read_text(encoding="utf-8") for pair in PAIRS] + list(CASES.values())
    sources.append("match x:\n  case {'a': 1, **rest}: pass\n  case C(k=1) | None: pass\n  case [*r] as w: pass\n"
                   "def f(a: int, *b, c=1, **d) -> None:\n  global g\n  return f'{a!r:>{c}}'\n")
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found = index_by_type(tree)
        expected: dict[type, list[int]] = {}
        for node in ast.walk(tree):
            if not isinstance(node, leaves):
                expected.setdefault(type(node), []).append(id(node))
        assert {kind: sorted(map(id, nodes)) for kind, nodes in found.items()} == {
            kind: sorted(ids) for kind, ids in expected.items()
        }


DIMENSION_READS = {
    # source: whether it holds `<subscript>.value`
    "d = x.shape[0].value\n": True,
    "d = x.get_shape()[1] .value\n": True,
    "d = (x.shape[0]\n     .value)\n": True,
    "d = (x.shape[0]  # the rows\n     .value)\n": True,
    "d = x.shape[0]. \\\n    value\n": True,
    "d = (x.shape[0].\n value)\n": True,
    "v = self.value\nvalue = 3\nf(value=v)\nprint('x.value')\n": False,
    "v = counts['a'].values\n": False,
    "v = [1][0]\ndef value(): pass\n": False,
    "v = x[0]\nvalue = 2\n": False,  # a line that starts with the word, after a subscript
    "a = x[0] \\\n  .value\n": True,
    "v = d[k]\nw = self.value\n": False,
    "v = x.shape[0].ｖalue\n": True,  # NFKC: the attribute is `value`
    "d = (x.shape[0].  # the rows\r     value)\r": True,  # a lone CR ends the comment
}


@pytest.mark.parametrize("source", sorted(DIMENSION_READS))
def test_dimension_value_precheck_never_misses_a_read(source: str) -> None:
    """TFM103 walks the tree only where the text may spell `<subscript>.value`: the cheap check says
    so wherever the tree holds one (and may say so where it does not)."""
    from tfmigrate.rules.dimension_value import _may_read_dimension

    holds = any(
        isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(node.value, ast.Subscript)
        for node in ast.walk(ast.parse(source))
    )
    assert holds == DIMENSION_READS[source]
    assert _may_read_dimension(source) is holds  # exact on these, `self.value` and keywords included


def test_dimension_value_precheck_agrees_with_the_tree_on_every_fixture() -> None:
    from tfmigrate.rules.dimension_value import _may_read_dimension

    for pair in PAIRS:
        source = pair.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Attribute) and n.attr == "value" and isinstance(n.value, ast.Subscript) for n in ast.walk(tree)):
            assert _may_read_dimension(source), pair


def test_the_import_passs_insertions_need_no_line_diff_of_the_rules() -> None:
    """`TransformResult.import_insertions` (what a notebook moves into the cell importing
    TensorFlow), worked out from the last rule's text alone, is what the whole change track
    gives, over every fixture that gains an import."""
    compared = 0
    for pair in PAIRS:
        source = pair.read_text(encoding="utf-8")
        cheap = transform_source(source).import_insertions
        tracked = transform_source(source)
        assert tracked.changes is not None  # (the rules' line diffs, worked out first)
        assert cheap == tracked.import_insertions, pair
        compared += bool(cheap)
    assert compared > 50


def test_files_without_tensorflow_are_left_alone() -> None:
    source = "import numpy as np\n\nprint(np.ones(3))  # tensorflow is not imported here\n"
    result = transform_source(source)
    assert result.output == source and not result.rules and not result.todos


HEADS = [
    "import os\nx = 1\n",
    "import os\n# comment\n\nx = 1\n",
    "import os\n   # indented comment\nx = 1\n",
    "import os\n  \nx = 1\n",
    "import os  # trailing\nx = 1\n",
    "import os;\nx = 1\n",
    "import os; import sys\nx = 1\n",
    "import os\nx = 1; y = 2\n",
    "import os\nif x:\n  pass\n  # tail\n",
    '"""Doc."""\nimport os\n\n\n@dec\n# between\n@dec2\ndef f(): pass\n',
    '"doc" "concatenated"\nimport os\nx = 1\n',
    '("doc")\nimport os\nx = 1\n',
    'b"doc"\nimport os\nx = 1\n',
    'f"doc"\nimport os\nx = 1\n',
    '"""Doc."""; import os\nx = 1\n',
    "__strict__ = True\nimport os\nx = 1\n",
    '"""Usage:\n  prog \\\n    --flag=1\n"""\nimport os\nx = 1\n',  # a backslash in the docstring joins no lines
    '"""Doc."""; \\\nimport os\nx = 1\n',
    '"""Doc."""\nimport os; \\\nx = 1\n',
    "__strict__ = x = True\nimport os\nx = 1\n",
    "# header\n\nx = 1\n",
    "import os\n",
    "import os\nimport sys\n",
    "from absl import flags\nx = 1\n",
    "from absl import app as application\nx = 1\n",
    "from absl import *\nx = 1\n",
    "from . import absl\nfrom .absl import flags\nx = 1\n",
    "import absl.flags\nimport tensorflow as tf\nimport tensorflow as tf2\nx = 1\n",
    "import tensorflow as tf2\nimport tensorflow as tf\nx = 1\n",
    "from tfmigrate import runtime as tfm\nimport tfmigrate.runtime as tfm\nx = 1\n",
    "from __future__ import annotations\nimport os\n\nclass A:\n  pass\n",
    "import os\nfrom absl import (\n    logging,\n)\ndef f():\n  import sys\n",
    "import os \\\n  , sys\nx = 1\n",
    "import os; \\\nx = 1\n",
    "import os; \\\nimport sys\nx = 1\n",
    "x = 1\nimport os\n",
    "import os\n\x0c\nx = 1\n",
    # a top `from m import ...` that the visitor extends with the names asked of `m`
    "from absl import flags  # c\nimport tensorflow as tf\n\n\nx = 1\n",
    "from absl import flags, logging as lg\nx = 1\n",
    "from absl import flags\nfrom absl import logging\nx = 1\n",
    "from  absl  import  flags\nx = 1\n",
    "from absl import (flags)\nx = 1\n",
    "from absl import (\n    flags)\nx = 1\n",
    "from absl.flags import x\nfrom absl import flags\nx = 1\n",
    "from \u00e9bsl import y\nfrom absl import flags\nx = 1\n",
    '"""D\u00e9j\u00e0."""\nfrom absl import flags\nimport os\n@dec\ndef f(): pass\n',
    "from absl import flags as f, app\nx = 1\n",
    # no top import block: the imports go first, below the header or the docstring
    "x = 1\nimport os\n",
    "# a\n\n# b\nx = 1\n",
    "\n\nx = 1\n",
    '#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""Doc."""\nx = 1\n',
    '"""Doc."""\n# c\nx = 1\n',
    '"""Doc."""\n\n\n# c\nx = 1\n',
    '"""Doc."""  # c\nx = 1\n',
    "__tfmigrate_magic_2_0__\n__tfmigrate_cell_3__\nimport os\nimport tensorflow as tf\n__tfmigrate_cell_4__\ndef f(): pass\n",
    "# c\n__m__\n\nimport os\nx = 1\n",
    "@dec\n# between\ndef f(): pass\n",
    "# header \\\nx = 1\n",
    # a backslash ending a comment joins no lines (the licence header's usage example)
    '"""Doc."""\n# usage: prog \\\n#   --flag=1\nimport os\nx = 1\n',
    '"""Doc."""\nimport os  # c \\\nimport sys # d \\\n\nx = 1\n',
    "# licence \\\nimport os\nx = 1\n",
    "if a:\n  pass\nimport os\n",
    "x = 1; import os\n",
    "__strict__ = True\n\n# c\nx = 1\n",
    '"""Doc."""\n',
    "# only a comment\n",
]
REQUESTS = [
    [("tensorflow", None, "tf")],
    [("absl", "flags", None), ("absl", "logging", None), ("absl", "app", "application")],
    [("absl", "flags", None), ("absl", "flags", None), ("os", None, None), ("sys", None, None)],
    [("tfmigrate.runtime", None, "tfm"), ("tensorflow", None, "tf2"), ("absl", "logging", "lg"), ("absl", "logging", "lg")],
    [("os", None, None)],
    [("absl", "flags", None), ("absl", "flags", "f")],
    [("absl", "app", None)],
    [("absl", "app", None), ("absl", "logging", None), ("absl", "app", "a"), ("\u00e9bsl", "z", None), ("os", None, None)],
    [("absl", "flags", "f"), ("absl", "flags", None)],
]


@pytest.mark.parametrize("head", range(len(HEADS)))
def test_text_import_pass_equals_add_imports_visitor(head: int) -> None:
    """The engine's text import pass gives AddImportsVisitor's output wherever it answers."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    from tfmigrate.textpass import add_imports

    source = HEADS[head]
    for requests in REQUESTS:
        context = CodemodContext()
        for request in requests:
            AddImportsVisitor.add_needed_import(context, *request)
        items = AddImportsVisitor._get_imports_from_context(context)
        fast = add_imports(source, ast.parse(source), items)
        if fast is None:
            continue
        expected = AddImportsVisitor(context).transform_module(cst.parse_module(source)).code
        assert fast == expected, (source, requests)


@pytest.mark.parametrize("source", [
    '"""Doc."""\n# usage: prog \\\n#   --flag=1\nimport os\nx = 1\n',
    '"""Doc."""\nimport os  # c \\\nimport sys # d \\\n\nx = 1\n',
])
def test_a_backslash_ending_a_comment_keeps_the_text_import_pass(source: str) -> None:
    """A comment's last backslash joins no lines: the text import pass answers, as the visitor does."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    from tfmigrate.textpass import add_imports

    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, "tfmigrate.runtime", None, "tfm")
    items = AddImportsVisitor._get_imports_from_context(context)
    fast = add_imports(source, ast.parse(source), items)
    assert fast is not None
    assert fast == AddImportsVisitor(context).transform_module(cst.parse_module(source)).code
    joined = source.replace("import os", "import os; \\\nimport a")  # a backslash that joins: the visitor's
    assert add_imports(joined, ast.parse(joined), items) is None


REPARSE_SOURCE = (
    '"""Doc."""\nimport tensorflow as tf\n\n@deco(tf.a)\n# between\ndef f(x):\n  return tf.gfile.Exists(x)  # c\n\n'
    "a = tf.b; c = tf.d\nclass K:\n  y = tf.e\n# tail comment tf.f\n"
)


@pytest.mark.parametrize(
    "old, new, parsed_alone",
    [
        ("tf.gfile.Exists", "tf.io.gfile.exists", True),  # inside a function
        ("tf.a", "tfm.a", True),  # in a decorator
        ("tf.d", "tf.compat.v1.d", True),  # `a; b`: both statements again
        ("tf.e", "x", True),
        ("tf.f", "x", False),  # in a comment between statements: the whole file again
        ("tf.b", "(\ntf.b)", False),  # a line added
    ],
)
def test_reparse_edited_equals_a_full_parse(old: str, new: str, parsed_alone: bool) -> None:
    from tfmigrate.names import SourceLines
    from tfmigrate.parsing import reparse_edited

    source = REPARSE_SOURCE
    lines = SourceLines(source)
    start = source.encode().index(old.encode())
    output = source.replace(old, new, 1)
    tree = reparse_edited(ast.parse(source), lines, [(start, start + len(old.encode()), new)], output)
    if not parsed_alone:
        assert tree is None
        return
    assert tree is not None
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(output), include_attributes=True)


def _view(source: str) -> SourceView:
    return SourceView(source, ast.parse(source))


def _span(source: str, text: str) -> tuple[int, int]:
    start = source.encode().index(text.encode())
    return start, start + len(text.encode())


def test_respelled_chains_and_import_paths_are_known_to_parse() -> None:
    source = "import tensorflow.compat.v1 as tf\nfrom tensorflow.compat.v1 import layers\nx = tf.placeholder(tf.float32)\n"
    view = _view(source)
    assert view.respells_chains_only([(*_span(source, "tf.placeholder"), "tf.compat.v1.placeholder")])
    assert view.respells_chains_only([(*_span(source, "tensorflow.compat.v1 as"), "tensorflow as")]) is False
    assert view.respells_chains_only([(*_span(source, "tensorflow.compat.v1"), "tensorflow")])
    start = source.index("from tensorflow.compat.v1") + len("from ")
    assert view.respells_chains_only([(start, start + len("tensorflow.compat.v1"), "tensorflow")])


def test_other_edits_are_parsed_again() -> None:
    source = "import tensorflow as tf\ntf.x = tf.y\nf'{tf.z}'\n"
    view = _view(source)
    assert not view.respells_chains_only([(*_span(source, "tf.x"), "tf.compat.v1.x")])  # assigned to
    assert not view.respells_chains_only([(*_span(source, "tf.y"), "tf.y()")])  # not a dotted name
    assert not view.respells_chains_only([(*_span(source, "tf.y"), "tf.lambda")])  # a keyword
    assert not view.respells_chains_only([(*_span(source, "tf.z"), "tf.compat.v1.z")])  # in an f-string
    assert not view.respells_chains_only([(*_span(source, "tf.y"), "tf.compat.v1.y"), (*_span(source, "tf.y"), "tf.y")])


@pytest.mark.parametrize("spelling", [
    "from tensorflow.contrib.rnn import \\\n    LSTMBlockCell, \\\n    LayerNormBasicLSTMCell\n",
    "from tensorflow.contrib.rnn import (LSTMBlockCell,  # the fused cell\n    LayerNormBasicLSTMCell)\n",
    "from tensorflow.contrib.rnn import (\n    LSTMBlockCell,\n    LayerNormBasicLSTMCell,\n)\n",
])
def test_a_kept_contrib_import_spelled_across_lines_is_quoted_on_one_line(spelling: str) -> None:
    """texar 0.2.4's and tflearn 0.3.2's `from tensorflow.contrib.X import \\` + names on the next
    line: the TODO quoting the import held its line break, and LibCST refused the comment (E999,
    the file left unmigrated). The TODO now quotes the import on one line, without its comments."""
    source = f"import tensorflow as tf\n{spelling}\n\ndef f(x):\n    return LSTMBlockCell(3), LayerNormBasicLSTMCell(3)\n"
    _same(source)
    result = transform_source(source)
    assert result.error is None
    assert ("# TODO(tfmigrate TFM101): tf.contrib does not exist in TF2 (`from tensorflow.contrib.rnn import "
            "LSTMBlockCell, LayerNormBasicLSTMCell`)") in result.output, result.output
    assert spelling in result.output  # the import itself as written
    assert transform_source(result.output).output == result.output


def test_a_todo_is_one_comment_line_whatever_its_message_quotes() -> None:
    from tfmigrate.todos import TODO_RE, todo_comment

    comment = todo_comment("TFM101", "quoting `a = f(x, \\\n      y)` and `b(\r\n  c)`")
    assert "\n" not in comment and "\r" not in comment
    assert TODO_RE.match(comment).group(2) == "quoting `a = f(x, y)` and `b( c)`"


@pytest.mark.parametrize("transform", [transform_source, reference_transform])
def test_unread_removed_module_imports_a_package_reexports_keep_a_todo(transform) -> None:
    """A package's `__init__.py` imports for other code to read: an import there of a module
    current TF lacks that the module itself never reads gets the TODO, not deletion (elsewhere it
    goes: `removed_module_imports_nothing_reads`), and a second run changes nothing."""
    source = (
        "from tensorflow_estimator.python.estimator.export.export_output import EvalOutput\n"
        "from tensorflow_estimator.python.estimator.export.export_output import PredictOutput\n"
        "from tensorflow.contrib import layers\n"
    )
    result = transform(source, filename="pkg/__init__.py")
    assert result.output.count("# TODO(tfmigrate TFM101)") == 2, result.output
    assert "import EvalOutput\n" in result.output and "from tensorflow.contrib import layers\n" in result.output
    assert "from tfmigrate.runtime.estimator.export import PredictOutput\n" in result.output
    assert not transform(result.output, filename="pkg/__init__.py").changed
    elsewhere = transform(source, filename="pkg/outputs.py").output
    assert "EvalOutput" not in elsewhere and "layers" not in elsewhere


@pytest.mark.parametrize("transform", [transform_source, reference_transform])
def test_a_todo_above_the_first_statement_is_not_written_again(transform) -> None:
    """LibCST keeps the comments above a module's first statement in the module's header, not in
    the statement's leading lines: a TODO there is one the statement already has (a second run
    wrote it again, and the reference pipeline's second pass twice more)."""
    source = "from tensorflow.contrib import layers as tf_layers\n\n\ndef f(x):\n  return tf_layers.foo(x)\n"
    once = transform(source).output
    assert once.count("then remove this import") == 1, once
    assert not transform(once).changed


_TEST_CASE = (
    "import tensorflow as tf\n{head}\n\nclass T(tf.test.TestCase):\n{decorator}"
    "  def test_a(self):\n    x = tf.constant(1) + 1\n{body}\n\nif __name__ == '__main__':\n  tf.test.main()\n"
)


@pytest.mark.parametrize("head, decorator, body", [
    ("", "", "    with self.test_session() as sess:\n      self.assertEqual(self.evaluate(x), 2)"),  # runs eagerly
    ("", "", "    with self.cached_session() as sess:\n      self.assertEqual(sess.run(x), 2)"),  # its eager stand-in
    ("", "", "    with tf.Graph().as_default():\n      y = tf.constant(1)\n      with self.session() as sess:\n        sess.run(y)"),
    ("from tensorflow.python.framework import test_util", "  @test_util.run_deprecated_v1\n",
     "    with self.session():\n      x.eval()"),
])
@pytest.mark.parametrize("transform", [transform_source, reference_transform])
def test_test_cases_that_run_eagerly_keep_v2_behaviour(transform, head: str, decorator: str, body: str) -> None:
    """TFM104 switches a TestCase module whose session blocks fail eagerly, not one whose blocks
    TF2 runs (`self.evaluate`, `cached_session()`'s `sess.run(fetches)`, a graph made the
    default) or that TF's graph-mode decorators already run in graph mode."""
    source = _TEST_CASE.format(head=head, decorator=decorator, body=body)
    assert transform(source).output == source
    _same(source)


@pytest.mark.parametrize("body", [
    "    with self.session() as sess:\n      sess.run(x)",
    "    with self.test_session():\n      x.eval()",
    "    with self.cached_session() as sess:\n      sess.run(x, feed_dict={x: 1})",
])
def test_test_cases_whose_sessions_fail_eagerly_run_their_tests_as_tf1(body: str) -> None:
    source = _TEST_CASE.format(head="", decorator="", body=body)
    once = transform_source(source).output
    assert "\n@tfm.tf1.graph_mode_test\nclass T(tf.test.TestCase):\n" in once and "disable_v2_behavior" not in once, once
    _same(source)
    assert transform_source(once).output == once


def _kept_import_program(rng) -> str:
    """A module the import pass adds lines to (`from absl import logging`, the runtime's import)
    while respelled chains ask to drop an import they may leave read or unread (`slim.conv2d` ->
    `tfm.legacy.slim.conv2d`; `slim.nonexistent_thing` kept): that import at the top, below code,
    in a `try`, aliased, beside a relative import of the same name, read above it at module level,
    in a function, or not at all."""
    local = rng.choice(["slim", "slim", "cslim"])
    spelled = "from tensorflow.contrib import slim" + (" as cslim" if local == "cslim" else "")
    head = ["import tensorflow as tf\n"] + rng.sample(["import logging\n", "import os\n", "from . import util\n"], rng.randint(0, 2))
    place = rng.choice(["top", "top", "below", "try", "relative"])
    if place == "top":
        head.append(spelled + "\n")
    body = [rng.choice(["x = 1\n", "def g():\n  return 2\n", ""])]
    if rng.random() < 0.3:
        body.insert(0, f"early = {local}\n" if place != "top" else f"early = {local}.nonexistent_thing()\n")
    if place == "below":
        body.append(spelled + "\n")
    elif place == "try":
        body.append(f"try:\n  {spelled}\nexcept ImportError:\n  pass\n")
    elif place == "relative":
        head.append(f"from . import {local}\n")
        body.append(spelled + "\n")
    uses = rng.sample([
        f"net = {local}.conv2d(x, 3, [3, 3])\n", f"net = {local}.max_pool2d(net, [2, 2])\n",
        f"y = {local}.nonexistent_thing(x)\n", f"def f():\n  return {local}.nonexistent_thing(1)\n", f"z = {local}\n",
    ], rng.randint(1, 3))
    adds = rng.sample(["tf.logging.info('x')\n", "h = tf.layers.dense(x, 1)\n", "q = 1\n"], rng.randint(1, 2))
    return "".join(head) + "".join(body) + "".join(uses) + "".join(adds)


def test_generated_kept_imports_after_added_lines_fast_equals_reference() -> None:
    """Where the import pass added lines and a respelled chain asks to drop an import it may still
    read, the text path keeps or drops it as the LibCST path does: the same output, TODOs and
    changes on every generated program."""
    seen, kept = _same_over_generated(_kept_import_program, 5, 120,
                                      lambda program, output: "from tensorflow.contrib import slim" in output)
    assert len(seen) > 100 and 20 < kept < len(seen) - 20


def test_a_statement_scanned_in_an_earlier_view_reads_as_in_a_fresh_one() -> None:
    """The scan of a text pass's output takes the statements its edits missed from the earlier
    view's walk, their byte offsets moved by what the edits added before them: the same chains,
    names, imports, counts and nodes by type as a walk of a full parse of that output."""
    from tfmigrate.parsing import forget_parses

    for name in sorted(CASES):
        source = CASES[name]
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        forget_parses()
        view = SourceView(source, tree)
        chains = [c for c in view.chains if not c.in_import and not c.in_fstring and "." in c.dotted]
        if not chains:
            continue
        # Every other chain respelled longer (`tf.X` -> `tf.compat.v1.X`-like): the statements between keep their text.
        replacements = [(c.start, c.end, c.dotted.replace(".", ".compat_v1.", 1)) for c in chains[::2]]
        data = view.lines.data
        for start, end, text in sorted(replacements, reverse=True):
            data = data[:start] + text.encode() + data[end:]
        output = data.decode("utf-8")
        shared = reparse_edited(view.tree, view.lines, replacements, output)
        if shared is None:
            continue
        edited, fresh = SourceView(output, shared, names=view.names), SourceView(output, ast.parse(output), names=view.names)

        def seen(v: SourceView):
            where = lambda node: None if node is None else (type(node).__name__, node.lineno, node.col_offset)  # noqa: E731
            return (
                [(c.dotted, c.start, c.end, where(c.stmt), c.in_fstring, c.in_import, c.under_attribute, where(c.node), c.call, c.bare)
                 for c in v.chains],
                [(c.dotted, c.start, c.end, where(c.node), c.call) for c in v.lone_names],
                [(where(imp), top) for imp, top in v.imports],
                v._bare, v._loads, v._top_loads, v._binds,
                {kind: len(nodes) for kind, nodes in v._by_type.items()},
            )

        assert seen(edited) == seen(fresh), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_reparsing_the_edited_statements_equals_a_full_parse(name: str) -> None:
    """`reparse_edited` after respellings longer and shorter (every second chain, then every
    third, one at a time too), at any depth (a line of a function, a branch, a handler, the last
    line of a block): the tree a full parse of the output gives, positions included."""
    import random

    source = CASES[name]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    view = SourceView(source, tree)
    chains = [c for c in view.chains if not c.in_import and not c.in_fstring and "." in c.dotted]
    rng = random.Random(name)
    choices = [chains[::2], chains[1::3]] + [[chain] for chain in rng.sample(chains, min(3, len(chains)))]
    for picked in choices:
        if not picked:
            continue
        replacements = [(c.start, c.end, rng.choice([c.dotted.replace(".", ".compat_v1.", 1), c.dotted.rpartition(".")[0] or "x"]))
                        for c in picked]
        data = view.lines.data
        for start, end, text in sorted(replacements, reverse=True):
            data = data[:start] + text.encode() + data[end:]
        output = data.decode("utf-8")
        try:
            expected = ast.parse(output)
        except SyntaxError:
            continue
        got = reparse_edited(tree, view.lines, replacements, output)
        if got is not None:
            assert ast.dump(got, include_attributes=True) == ast.dump(expected, include_attributes=True), name


def test_a_held_blocks_first_tree_outlives_the_parse_memo() -> None:
    """Inside `parses_held` the block's first parse (a module's source, which the runner reads its
    imports from after the migration's later texts) is kept past the memo's few, with the index a
    walk of it made: the same tree and index come back, not a parse or walk again."""
    from tfmigrate import parsing

    source = "import a\nimport b as c\nc.x(a.y)\n"
    with parsing.parses_held():
        tree = parsing.parse(source)
        by_type = parsing.index_by_type(tree)
        parsing.remember_index(tree, by_type)
        for i in range(parsing._PARSED_KEPT + 2):
            later = parsing.parse(f"x = {i}\n")
            parsing.remember_index(later, parsing.index_by_type(later))
        assert source not in parsing._PARSED and id(tree) not in parsing._INDEXED
        assert parsing.parse(source) is tree
        assert parsing.indexed(tree) is by_type
    again = parsing.parse(source)  # the block over: forgotten
    assert again is not tree and ast.dump(again) == ast.dump(tree)
