"""`tfm.legacy.tf1_layers` / `tfm.legacy.tf1_rnn_cell`: TF 1.x's `tf.layers` and `tf.nn.rnn_cell`
with TF 1.x's default initializers.

tf-keras's legacy layers and cells (`tfm.legacy.layers`, `tfm.legacy.rnn_cell`) resolve a default
or named initializer (`kernel_initializer=None`, `'glorot_uniform'`) the way TF 2.x's
`tf.compat.v1.layers` did with v2 behaviour on: a Keras 2 initializer seeded from Python's
`random`. TF 1.x resolved it to `tf.compat.v1.glorot_uniform_initializer()` and the like, whose
draw takes its op seed from the graph (`tf.set_random_seed`, Estimator's `tf_random_seed`), one
per initializer, in the order the graph asks. Every later unseeded random op of the graph (a
dropout mask, a shuffle) counts those seeds too, so a TF 1.x program's dropout only repeats when
its initializers drew theirs. The codemod spells a TF 1.x program's `tf.layers.X` and RNN cells
from these modules; a TF 2.x program's `tf.compat.v1.layers.X` keeps `tfm.legacy.layers`.

Inside `tf1_initializers()` (each function of these modules, each `add_weight` of their classes and
subclasses), tf-keras's `initializers.get` maps a name to TF 1.x's initializer, as Keras 2 did
with v2 behaviour disabled; initializer objects pass through unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import threading
import types
from collections.abc import Iterator
from typing import Any

_LOCAL = threading.local()
_PATCHED: list[Any] = []  # tf-keras's `initializers.get`, once it is wrapped
_TABLE: dict[str, Any] = {}


@contextlib.contextmanager
def tf1_initializers() -> Iterator[None]:
    """Initializers named (or left default) inside are TF 1.x's, graph-seeded."""
    _install()
    _LOCAL.depth = getattr(_LOCAL, "depth", 0) + 1
    try:
        yield
    finally:
        _LOCAL.depth -= 1


def _tf1_table() -> dict[str, Any]:
    """Keras 2's initializer names with v2 behaviour disabled (tf-keras `populate_deserializable_objects`)."""
    if not _TABLE:
        import tensorflow as tf
        from tf_keras.src.initializers import initializers_v1
        from tf_keras.src.utils import generic_utils

        v1 = tf.compat.v1
        classes = {
            "Constant": v1.constant_initializer, "GlorotNormal": v1.glorot_normal_initializer,
            "GlorotUniform": v1.glorot_uniform_initializer, "Identity": v1.initializers.identity,
            "Ones": v1.ones_initializer, "Orthogonal": v1.orthogonal_initializer,
            "VarianceScaling": v1.variance_scaling_initializer, "Zeros": v1.zeros_initializer,
            "HeNormal": initializers_v1.HeNormal, "HeUniform": initializers_v1.HeUniform,
            "LecunNormal": initializers_v1.LecunNormal, "LecunUniform": initializers_v1.LecunUniform,
            "RandomNormal": initializers_v1.RandomNormal, "RandomUniform": initializers_v1.RandomUniform,
            "TruncatedNormal": initializers_v1.TruncatedNormal,
        }
        for key, value in classes.items():
            _TABLE[key] = _TABLE[generic_utils.to_snake_case(key)] = value
        for alias, name in (("normal", "random_normal"), ("uniform", "random_uniform"), ("one", "ones"), ("zero", "zeros")):
            _TABLE[alias] = _TABLE[name]
    return _TABLE


def _install() -> None:
    """Wrap tf-keras's `initializers.get` (which its legacy layers' `add_weight` calls) once."""
    if _PATCHED:
        return
    from tf_keras.src import initializers

    keras_get = initializers.get
    table = _tf1_table()

    def get(identifier: Any) -> Any:
        if getattr(_LOCAL, "depth", 0) and isinstance(identifier, str) and identifier in table:
            found = table[identifier]
            return found() if inspect.isclass(found) else found
        return keras_get(identifier)

    get.__doc__ = keras_get.__doc__
    initializers.get = get
    _PATCHED.append(keras_get)


def _tf1_function(function: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        with tf1_initializers():
            return function(*args, **kwargs)

    call.__name__, call.__qualname__, call.__doc__ = function.__name__, function.__qualname__, function.__doc__
    call.__wrapped__ = function  # type: ignore[attr-defined]
    return call


def _tf1_class(cls: type, methods: tuple[str, ...] = ("add_weight",), same_class: bool = False) -> type:
    """`cls` whose `methods` (its subclasses' too) run under TF 1.x's initializers; its name
    unchanged, so default layer names (`dense`, `dense_1`) and variable names are TF1's. With
    `same_class`, it answers `isinstance`/`issubclass` as `cls` does (`_same_class_meta`)."""

    def under_tf1(name: str) -> Any:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            with tf1_initializers():
                return getattr(super(tf1, self), name)(*args, **kwargs)

        method.__name__ = name
        # Markers Keras reads off the method (`build`'s `_is_default`: a subclassed Model's default
        # build is never called, which would trace the model over placeholders in a TF1 graph).
        method.__dict__.update(getattr(getattr(cls, name), "__dict__", {}))
        return method

    body = {name: under_tf1(name) for name in methods if hasattr(cls, name)}
    body.update(__doc__=cls.__doc__, __module__=cls.__module__)
    if same_class:
        body["_tf1_wraps"] = cls  # (read by `_same_class_meta` off this class alone, not its subclasses)
    tf1 = (_same_class_meta(type(cls)) if same_class else type)(cls.__name__, (cls,), body)
    tf1.__qualname__ = cls.__qualname__
    return tf1


def _tf1_value(value: Any, tf1_class: Any) -> Any:
    """A legacy module's attribute with TF 1.x's initializers: a class with weights through
    `tf1_class`, a function run under them; anything else as it is."""
    if inspect.isclass(value) and hasattr(value, "add_weight"):
        return tf1_class(value)
    if inspect.isfunction(value):
        return _tf1_function(value)
    return value


def tf1_module(name: str, source: str) -> types.ModuleType:
    """The legacy module `source` (tf-keras's `layers` or `rnn_cell`) with TF 1.x's initializers;
    its classes answer `isinstance`/`issubclass` as tf-keras's own (a cell is an `RNNCell`)."""
    legacy = importlib.import_module(source)
    module = types.ModuleType(name, __doc__)
    for attr in dir(legacy):
        if attr.startswith("_"):
            continue
        setattr(module, attr, _tf1_value(getattr(legacy, attr), _tf1_same_class))
    return module


def _tf1_same_class(cls: type) -> type:
    return _tf1_class(cls, same_class=True)


@functools.cache  # one TF1 class per Keras class, whichever module path reached it
def _tf1_keras_class(cls: type) -> type:
    """A Keras class (a layer, a model) whose construction, build, call and weights run under
    TF 1.x's initializers, so the layers it makes inside (an RNN's cell, a Sequential's layers
    built from `input_shape`) draw TF1's way too; `isinstance` as Keras 2's own class."""
    return _tf1_class(cls, ("__init__", "__call__", "build", "add_weight"), same_class=True)


@functools.cache
def _same_class_meta(meta: type) -> type:
    """A metaclass (over `meta`) whose classes answer `isinstance`/`issubclass` as the class they
    wrap does: `isinstance(layer, tfm.legacy.keras.layers.Dense)` holds for any Keras 2 Dense."""

    # (by the MRO: an ABC's own check asks each of its subclasses, this one among them, again).
    # A program's own subclass of one (`class MyCell(tf1_rnn_cell.RNNCell)`) answers as a class does.
    def __instancecheck__(cls: type, instance: Any) -> bool:
        wrapped = cls.__dict__.get("_tf1_wraps")
        return meta.__instancecheck__(cls, instance) if wrapped is None else wrapped in type(instance).__mro__

    def __subclasscheck__(cls: type, subclass: type) -> bool:
        wrapped = cls.__dict__.get("_tf1_wraps")
        return meta.__subclasscheck__(cls, subclass) if wrapped is None else wrapped in getattr(subclass, "__mro__", ())

    return type(f"TF1{meta.__name__}", (meta,), {"__instancecheck__": __instancecheck__, "__subclasscheck__": __subclasscheck__})


class _TF1KerasModule(types.ModuleType):
    """One module of Keras 2's v1 API (`tf_keras.api._v1.keras[.layers]`), read lazily: its layer
    and model classes TF1-initialized (`_tf1_keras_class`), its functions run under TF 1.x's
    initializers (`initializers.get('glorot_uniform')`), its submodules wrapped alike."""

    def __init__(self, name: str, source: types.ModuleType) -> None:
        super().__init__(name, source.__doc__)
        self._source = source

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(self._source, attr)
        if isinstance(value, types.ModuleType):
            value = _TF1KerasModule(f"{self.__name__}.{attr}", value)
        else:
            value = _tf1_value(value, _tf1_keras_class)
        setattr(self, attr, value)
        return value

    def __dir__(self) -> list[str]:
        return dir(self._source)


def tf1_keras(name: str, source: str) -> types.ModuleType:
    """TF 1.x's `tf.keras` (Keras 2's v1 API at `source`) with TF 1.x's initializers."""
    return _TF1KerasModule(name, importlib.import_module(source))
