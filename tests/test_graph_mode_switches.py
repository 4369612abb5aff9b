"""TFM201/TFM401: a TF1 program's switch to graph mode (`tf.compat.v1.disable_eager_execution()`,
`disable_v2_behavior()`) is removed where an estimator of the file is migrated (the migrated
program needs eager execution), and left with TFM101's TODO where none is."""

from __future__ import annotations

import ast

import pytest

from tfmigrate.engine import Options, transform_source

CANNED = '''import tensorflow.compat.v1 as tf
{module_switch}

def input_fn():
  return tf.data.Dataset.from_tensor_slices(({{'x': [[1.0], [2.0]]}}, [[0], [1]])).batch(2)


def main():
  {main_switch}
  columns = [tf.feature_column.numeric_column('x')]
  model = tf.estimator.LinearClassifier(feature_columns=columns, model_dir='m')
  model.train(input_fn=input_fn, steps=2)
  print(model.evaluate(input_fn=input_fn))


if __name__ == '__main__':
  {main_block_switch}
  main()
'''


@pytest.mark.parametrize("target", ["keras", "ctl"])
@pytest.mark.parametrize("switch", ["tf.disable_v2_behavior()", "tf.compat.v1.disable_eager_execution()"])
@pytest.mark.parametrize("where", ["module_switch", "main_switch", "main_block_switch"])
def test_switch_is_removed_with_a_note_where_the_estimator_is_migrated(target, switch, where):
    fields = {"module_switch": "", "main_switch": "pass", "main_block_switch": "pass"}
    fields[where] = switch
    out = transform_source(CANNED.format(**fields), filename="x.py", options=Options(target=target)).output
    ast.parse(out)
    assert "disable_v2_behavior()\n" not in out and "disable_eager_execution()\n" not in out
    assert "TODO(tfmigrate" not in out
    spelled = "tf.compat.v1." + switch.rsplit(".", 1)[1]
    assert f"# tfmigrate: removed `{spelled}`: the migrated program runs eagerly" in out
    assert "tfm.canned.LinearClassifier(" in out


def test_a_block_left_empty_gets_pass():
    source = CANNED.format(module_switch="", main_switch="pass", main_block_switch="pass").replace(
        "if __name__ == '__main__':\n  pass\n  main()\n",
        "if __name__ == '__main__':\n  main()\n\nif tf.executing_eagerly():\n  tf.compat.v1.disable_eager_execution()\n",
    )
    out = transform_source(source, filename="x.py").output
    ast.parse(out)
    assert "if tf.executing_eagerly():\n  # tfmigrate: removed `tf.compat.v1.disable_eager_execution()`" in out
    assert out.rstrip().endswith("pass")


def test_switch_stays_when_no_estimator_is_migrated():
    # Graph-mode TF1 code, no estimator migrated to Keras: the switch still runs on current TF
    # (tf.compat.v1 has it) and the code needs it, so it stays, with no TODO.
    source = (
        "import tensorflow.compat.v1 as tf\n\n"
        "tf.disable_v2_behavior()\n"
        "x = tf.placeholder(tf.float32, [None, 1])\n"
    )
    out = transform_source(source, filename="x.py").output
    assert "tf.compat.v1.disable_v2_behavior()" in out and "tf.compat.v1.placeholder(" in out
    assert "TODO" not in out

