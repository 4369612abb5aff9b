"""A LibCST statement's line read off the `ast` of the same text (`tfmigrate.statement_lines`), and
off its top-level statement's code (`estimator_scan.line_in_text`), is the line LibCST's own
`PositionProvider` gives, for every statement of every fixture and of the shapes below."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from conftest import ROOT
from tfmigrate.estimator_scan import line_in_text
from tfmigrate.statement_lines import statement_line

SHAPES = {
    "decorated definitions": (
        "import functools\n\n\n@functools.lru_cache()\n# between\n@functools.wraps(f)\ndef f(x):\n  y = x\n  return y\n\n\n"
        "@dataclass\nclass A:\n  @property\n  def b(self):\n    return 1\n\n  x = 2\n"
    ),
    "branches": (
        "if a:\n  x = 1\nelif b:\n  x = 2\nelif c:\n  if d:\n    x = 3\n  else:\n    x = 4\nelse:\n  if e:\n    x = 5\n"
        "for i in y:\n  z = i\nelse:\n  z = 0\nwhile q:\n  break\nelse:\n  pass\n"
    ),
    "try": (
        "try:\n  a = 1\nexcept ValueError as e:\n  b = 2\nexcept (KeyError, TypeError):\n  c = 3\nelse:\n  d = 4\n"
        "finally:\n  e = 5\n"
    ),
    "small statements sharing a line": "a = 1; b = 2\nc = (3,\n     4); d = 5\nif x: y = 1; z = 2\nw = 6;\n",
    "one-line suites and async": (
        "def f(): return 1\nclass C: pass\nasync def g():\n  async with h() as i:\n    async for j in i:\n      await j\n"
        "  with open('x') as k: pass\n"
    ),
    "match": "match x:\n  case 1:\n    a = 1\n  case [y, *rest] if y:\n    b = 2\n  case _:\n    c = 3\n",
    "comments and blank lines": "# head\n\nx = 1  # tail\n\n\n# above\ndef f():\n  # inside\n\n  return 2\n  # after\n\n# end\ny = 3\n",
    "continuations and strings": 'x = 1 + \\\n  2\ns = """a\nb"""\nt = f(\n  1,\n  2)\nu = 3\n',
}


def _sources() -> list[tuple[str, str]]:
    out = [(name, source) for name, source in SHAPES.items()]
    for path in sorted((ROOT / "fixtures").glob("*/*.in.py")):
        out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


def _statements(node: cst.CSTNode):
    for child in node.children:
        if isinstance(child, (cst.BaseStatement, cst.BaseSmallStatement)):
            yield child
        yield from _statements(child)


@pytest.mark.parametrize("name, source", _sources(), ids=[name for name, _ in _sources()])
def test_statement_lines_are_positionprovider_lines(name: str, source: str) -> None:
    module, tree = cst.parse_module(source), ast.parse(source)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    told = 0
    for statement in _statements(module):
        want = positions[statement].start.line
        line = statement_line(module, tree, statement)
        if line is not None:
            told += 1
            assert line == want, (name, type(statement).__name__, want, line)
        if name in SHAPES:  # (each statement's code generated: the shapes alone)
            # (None: `_line_of` asks PositionProvider itself)
            assert line_in_text(module, source, statement) in (want, None), (name, type(statement).__name__, want)
    # Only small statements of a one-line suite (`if x: y = 1`) go untold.
    in_suites = sum(len(node.body.body) for node in _statements(module) if isinstance(getattr(node, "body", None), cst.SimpleStatementSuite))
    assert told >= sum(1 for _ in _statements(module)) - in_suites


def test_a_note_names_the_line_of_a_use_in_a_decorated_function() -> None:
    """The kept estimator's note says where it is used beyond train/evaluate: the line of that
    statement, below the decorators of the function holding it (it named the line counted from
    the first decorator)."""
    from tfmigrate.engine import transform_source

    source = (
        "import functools\nimport tensorflow as tf\n\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "  logits = tf.compat.v1.layers.dense(features['x'], 1)\n"
        "  loss = tf.reduce_mean(tf.square(logits - labels))\n"
        "  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, tf.compat.v1.train.get_global_step())\n"
        "  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n\n\n"
        "@functools.lru_cache()\n@functools.lru_cache()\n@functools.lru_cache()\ndef main():\n"
        "  est = tf.estimator.Estimator(model_fn=model_fn)\n  est.train(lambda: None, steps=1)\n"
        "  print(est.model_dir)\n  return est\n"
    )
    assert source.splitlines()[17] == "  print(est.model_dir)"
    output = transform_source(source, filename="x.py").output
    assert "(line 18: `print(est.model_dir)`)" in output
