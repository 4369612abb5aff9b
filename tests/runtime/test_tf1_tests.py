"""`tfm.tf1.graph_mode_test`: a TF 1.x `tf.test.TestCase` class whose tests run as under TF 1.x,
each test alone, under pytest and `python x_test.py` alike (TFM104 writes it on such classes)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import tensorflow as tf

from tfmigrate.engine import transform_source
from tfmigrate.runtime.tf1_tests import tf1_behaviour

# TF 1.x test code that fails eagerly: placeholders fed in a test session, a reference variable's
# initializer run as an op, a TF 1.x shape's `.value`, a v1 `cond` in the graph.
TF1_TEST = textwrap.dedent('''\
    import tensorflow as tf


    class GraphTest(tf.test.TestCase):

      def setUp(self):
        super(GraphTest, self).setUp()
        self.inputs = tf.placeholder(tf.float32, shape=[None, 3])

      def test_feed(self):
        total = tf.reduce_sum(self.inputs * 2.0)
        with self.test_session() as sess:
          self.assertAllClose(sess.run(total, {self.inputs: [[1.0, 2.0, 3.0]]}), 12.0)

      def test_variable_and_shape(self):
        counter = tf.Variable(4)
        self.assertEqual(self.inputs.get_shape()[1].value, 3)
        picked = tf.cond(tf.constant(True), lambda: counter + 1, lambda: counter)
        with self.cached_session():
          tf.global_variables_initializer().run()
          self.assertEqual(picked.eval(), 5)
          self.assertFalse(tf.executing_eagerly())


    if __name__ == "__main__":
      tf.test.main()
    ''')

# A TF2 test that pytest runs after it in the same process: eager, resource variables, TF2 shapes.
TF2_TEST = textwrap.dedent('''\
    import tensorflow as tf


    class EagerTest(tf.test.TestCase):

      def test_eager(self):
        self.assertTrue(tf.executing_eagerly())
        self.assertTrue(hasattr(tf.Variable(1.0), "handle"))
        self.assertEqual(tf.constant([1, 2]).shape[0], 2)
        self.assertEqual([int(x) for x in tf.data.Dataset.range(3)], [0, 1, 2])


    if __name__ == "__main__":
      tf.test.main()
    ''')


def test_tf1_behaviour_inside_the_block_and_tf2_after_it() -> None:
    assert tf.executing_eagerly() and tf.compat.v1.resource_variables_enabled()
    with tf1_behaviour():
        assert not tf.executing_eagerly()
        assert not tf.compat.v1.resource_variables_enabled()
        assert tf.TensorShape([2])[0].value == 2  # TF 1.x's Dimension
        with tf1_behaviour():  # (a subclass of a decorated class runs both)
            assert not tf.executing_eagerly()
        assert not tf.executing_eagerly() and not tf.compat.v1.resource_variables_enabled()
    assert tf.executing_eagerly() and tf.compat.v1.resource_variables_enabled()
    assert tf.TensorShape([2])[0] == 2 and not hasattr(tf.TensorShape([2])[0], "value")
    assert tf.__internal__.tf2.enabled()


def _pytest(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(directory)],
        capture_output=True, text=True, timeout=300, cwd=directory,
    )


def test_a_migrated_tf1_test_module_passes_under_pytest_and_its_main_block(tmp_path: Path) -> None:
    result = transform_source(TF1_TEST, filename="graph_test.py")
    assert "@tfm.tf1.graph_mode_test" in result.output and "disable_v2_behavior" not in result.output
    migrated, original = tmp_path / "migrated", tmp_path / "original"
    for directory, code in ((migrated, result.output), (original, TF1_TEST.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf"))):
        directory.mkdir()
        (directory / "a_graph_test.py").write_text(code, encoding="utf-8")
        (directory / "b_eager_test.py").write_text(TF2_TEST, encoding="utf-8")
    run = _pytest(migrated)
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    # The control: the same tests as TF 1.x wrote them fail eagerly on current TF.
    run = _pytest(original)
    assert run.returncode != 0 and "2 failed" in run.stdout, run.stdout[-3000:]
    main = subprocess.run([sys.executable, "a_graph_test.py"], capture_output=True, text=True, timeout=300, cwd=migrated)
    assert main.returncode == 0 and "OK" in main.stderr, main.stderr[-3000:]
