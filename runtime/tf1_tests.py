"""TF 1.x unit tests (`tf.test.TestCase`) run as TF 1.x ran them, one test at a time.

A TF 1.x test builds graphs and runs them in `self.session()` / `test_session()` /
`cached_session()`, with `.eval()` and `sess.run`; under TF2 those helpers run eagerly, where
that code fails. `tf.compat.v1.disable_v2_behavior()` turns the whole process back to TF 1.x:
in a test's main block it runs under `python x_test.py` but not under pytest (which imports the
module), and at import it would turn every test pytest collects after it to TF 1.x too.

`graph_mode_test` is the per-test form: each test of the class (its `setUp`, the test and its
`tearDown`) runs with TF 1.x's behaviour, what `disable_v2_behavior()` switches: graph mode, TF 1.x
reference variables, v1 control flow and `TensorShape` (`shape[0].value`), tensors hashed by id,
TF 1.x's `tf.data` classes; each switch is set back after the test. TF's own decorator for TF 1.x
tests, `test_util.run_deprecated_v1`, switches graph mode alone.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

__all__ = ["graph_mode_test", "tf1_behaviour"]


@contextlib.contextmanager
def tf1_behaviour() -> Iterator[None]:
    """TF 1.x behaviour (`disable_v2_behavior()`'s switches) inside the block, restored after it."""
    from tensorflow.python import tf2
    from tensorflow.python.compat import v2_compat
    from tensorflow.python.eager import context
    from tensorflow.python.framework import tensor, tensor_shape
    from tensorflow.python.ops import control_flow_util, control_flow_v2_toggles, resource_variables_toggle

    saved = (
        tf2.enabled(), tensor_shape._TENSORSHAPE_V2_OVERRIDE, resource_variables_toggle.resource_variables_enabled(),
        tensor.Tensor._USE_EQUALITY, control_flow_util.ENABLE_CONTROL_FLOW_V2,
    )
    tf2.disable()
    tensor_shape.disable_v2_tensorshape()
    resource_variables_toggle.disable_resource_variables()
    tensor.disable_tensor_equality()
    control_flow_v2_toggles.disable_control_flow_v2()
    _switch_data_classes(v2_compat)
    try:
        with context.graph_mode():
            yield
    finally:
        enabled, shape_override, resources, equality, control_flow = saved
        (tf2.enable if enabled else tf2.disable)()
        tensor_shape._TENSORSHAPE_V2_OVERRIDE = shape_override
        (resource_variables_toggle.enable_resource_variables if resources else resource_variables_toggle.disable_resource_variables)()
        (tensor.enable_tensor_equality if equality else tensor.disable_tensor_equality)()
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = control_flow
        _switch_data_classes(v2_compat)


def _switch_data_classes(v2_compat) -> None:
    """`tf.data`'s internal names for its dataset classes follow `tf2.enabled()` (as
    `disable_v2_behavior()` and `enable_v2_behavior()` make them)."""
    callbacks = v2_compat._DATA_V2_CALLBACKS
    for name in callbacks.list():
        callbacks.lookup(name)()


def graph_mode_test(cls: type) -> type:
    """Class decorator: every test of this `tf.test.TestCase` class (and of its subclasses) runs
    with TF 1.x's behaviour (`tf1_behaviour`), under `python x_test.py` and pytest alike."""
    run = cls.run

    def run_as_tf1(self, result=None):
        with tf1_behaviour():
            return run(self, result)

    run_as_tf1.__name__, run_as_tf1.__qualname__, run_as_tf1.__doc__ = "run", f"{cls.__qualname__}.run", run.__doc__
    cls.run = run_as_tf1  # type: ignore[method-assign]
    return cls
