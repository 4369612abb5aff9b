"""TF1 variable-scope code (`tf.compat.v1.get_variable`, `variable_scope`, `tf.layers`) inside Keras 3.

A TF1 model built by a function (BERT's `modeling.BertModel`, a tower under
`variable_scope(..., reuse=tf.AUTO_REUSE)`) creates its variables through the graph's variable
store. `VariableScopeLayer` runs such a function under a store of its own, the way tf-keras's
`track_tf1_style_variables` did for Keras 2:

  * Each call is one TF1 graph construction: a fresh variable store and variable-scope store, so
    `reuse=True` of a variable the call has not made yet raises, `AUTO_REUSE` shares,
    `tf.layers`-style default names restart at `dense`, `dense_1`, ... Inside a `tf.function`
    trace (Keras `fit`, `evaluate`, the ctl loops) TF1's reuse checks hold as in a graph; in eager
    calls TF makes every variable scope `AUTO_REUSE`, so a second `get_variable` of a name shares
    it where TF1 would have raised (valid TF1 programs get the same variables either way).
  * A variable is created once, on the first call that asks for it, as a Keras weight of the layer
    (trainable as `get_variable(trainable=...)` said, the TF1 initializer's value); later calls,
    retraces and other strategies' replicas get the same variable. The optimizer, Keras
    checkpoints and `model.fit` see them as the layer's weights.
  * `tf1_absolute_names` maps each TF1 name (`bert/embeddings/word_embeddings`) to its weight, so
    `init_from_checkpoint`, `load_tf1_checkpoint` and `warm_start` match TF1 checkpoints by name.

`tf.compat.v1.layers` raises under Keras 3; `dense`, `conv2d`, `dropout` and `layer_norm`
(`tf.contrib.layers.layer_norm`) are their functional forms with TF1's variable names, default
initializers and arithmetic, creating their variables with `tf.compat.v1.get_variable`, so TF1
scope code runs unchanged inside a `VariableScopeLayer`.

`graph_mode_test` (`tf1_tests`): a TF 1.x `tf.test.TestCase` class whose tests run as under TF 1.x.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import tensorflow as tf
from tensorflow.python.ops import variable_scope as _vs

from .tf1_tests import graph_mode_test

keras = tf.keras

__all__ = ["VariableScopeLayer", "conv2d", "dense", "dropout", "graph_mode_test", "layer_norm"]


class _CallStore(_vs._VariableStore):
    """One call's variable store: TF1's rules within the call; a name the layer already holds is
    the held variable instead of a new one."""

    __slots__ = ["_held", "_creating", "regularization_losses"]

    def __init__(self, held: dict[str, Any], creating: list[bool]) -> None:
        super().__init__()
        self._store_eager_variables = True
        self._held = held
        self._creating = creating
        self.regularization_losses: list[Any] = []

    def _get_single_variable(self, name, shape=None, dtype=tf.float32, reuse=None, regularizer=None, **kwargs):
        # TF1 ran a variable's regularizer where the graph created it: once per call, here.
        made_here = name not in self._vars and reuse is not True
        variable = self._variable(name, shape, dtype, reuse, **kwargs)
        if regularizer is not None and made_here:
            loss = regularizer(variable)
            if loss is not None:
                self.regularization_losses.append(loss)
        return variable

    def _variable(self, name, shape, dtype, reuse, **kwargs):
        if name in self._vars and reuse is False:
            raise ValueError(
                f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                "reuse=tf.AUTO_REUSE in VarScope?"
            )
        held = self._vars.get(name)
        if held is None and reuse is not True:
            held = self._held.get(name)
        if held is None:
            self._creating[0] = True  # the layer's creator makes this one a weight (not a Keras sublayer's)
            try:
                variable = super()._get_single_variable(name, shape=shape, dtype=dtype, reuse=reuse, **kwargs)
            finally:
                self._creating[0] = False
            _forget_in_collections(variable)
            self._held[name] = variable
            return variable
        if shape is not None and not tf.TensorShape(shape).is_compatible_with(held.shape):
            raise ValueError(
                f"Trying to share variable {name}, but specified shape {tf.TensorShape(shape)} and found shape "
                f"{tf.TensorShape(held.shape)}."
            )
        if not tf.as_dtype(dtype).is_compatible_with(tf.as_dtype(held.dtype)):
            raise ValueError(
                f"Trying to share variable {name}, but specified dtype {tf.as_dtype(dtype).name} and found dtype "
                f"{tf.as_dtype(held.dtype).name}."
            )
        self._vars[name] = held
        return held


def _forget_in_collections(variable) -> None:
    """Takes a layer's weight out of the graph collections an eager store put it in: the layer
    owns it, and TF code reading `GLOBAL_VARIABLES` (`tf.custom_gradient`, in distributed
    all-reduces) expects `tf.Variable`s there."""
    graph = tf.compat.v1.get_default_graph()
    for key in graph.get_all_collection_keys():
        collection = graph.get_collection_ref(key)
        collection[:] = [item for item in collection if item is not variable]


@contextlib.contextmanager
def _fresh_variable_scopes():
    """A fresh variable-scope store (scope names and their use counts) for one call."""
    collection = tf.compat.v1.get_collection_ref(_vs._VARSCOPESTORE_KEY)
    saved = list(collection)
    collection[:] = [_vs._VariableScopeStore()]
    try:
        yield
    finally:
        collection[:] = saved


class _Arguments:
    """A call's arguments, as one value Keras passes through untouched."""

    __slots__ = ("args", "kwargs")

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.args = args
        self.kwargs = kwargs


class VariableScopeLayer(keras.layers.Layer):
    """Runs a TF1-style function under a variable store whose variables are this layer's weights.

    Args:
      function: builds the TF1 graph (`tf.compat.v1.get_variable`, `variable_scope`, this module's
        `dense`/`layer_norm`/...) from the call's arguments and returns tensors.
      training_argument: the keyword the function takes the training flag as (`is_training`);
        the layer's `training` call argument (a Python bool under Keras) is passed under it.
      regularization_losses: add the `get_variable(regularizer=...)` losses to the layer's
        `losses` (which Keras adds to the loss): for a TF1 loss that read
        `tf.losses.get_regularization_loss()`. Without it they are dropped, as TF1 dropped the
        `REGULARIZATION_LOSSES` collection nothing read.
      **kwargs: `keras.layers.Layer` arguments (`name`, `trainable`, `dtype`).
    """

    def __init__(
        self,
        function: Callable[..., Any],
        training_argument: str | None = None,
        regularization_losses: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._regularization_losses = bool(regularization_losses)
        self._function = function
        self._training_argument = training_argument
        self._held: dict[str, Any] = {}
        self._creating = False
        self._from_store = [False]
        self.tf1_absolute_names: dict[str, Any] = {}
        self._allow_non_tensor_positional_args = True

    def _lock_state(self):
        """Weights appear on the first call that asks for them, after Keras built the layer."""

    def _creator(self, next_creator, **kwargs):
        if not self._from_store[0] or self._creating:
            # A Keras layer's own weight (called inside the function), or this weight's tf.Variable.
            return next_creator(**kwargs)
        name = kwargs.get("name")
        if not name:
            raise ValueError("VariableScopeLayer: a variable made without a name (tf.Variable) cannot be tracked")
        if name in self.tf1_absolute_names:
            raise ValueError(f"VariableScopeLayer: variable {name} made twice")
        initial_value = kwargs.get("initial_value")
        shape = kwargs.get("shape")
        dtype = kwargs.get("dtype")
        trainable = kwargs.get("trainable")
        synchronization = kwargs.get("synchronization") or tf.VariableSynchronization.AUTO
        if trainable is None:
            trainable = synchronization != tf.VariableSynchronization.ON_READ
        if not callable(initial_value):
            value = tf.get_static_value(initial_value)
            if value is None:
                raise ValueError(f"VariableScopeLayer: variable {name}'s initializer is not a constant")
            initial_value = tf.constant(value, dtype=dtype)
        if shape is None or not tf.TensorShape(shape).is_fully_defined() or dtype is None:
            with tf.init_scope():
                probe = initial_value() if callable(initial_value) else initial_value
                probe = tf.convert_to_tensor(probe)
            shape, dtype = probe.shape, probe.dtype
            initial_value = probe

        def initializer(shape=None, dtype=None):
            return initial_value() if callable(initial_value) else initial_value

        self._creating = True
        try:
            with tf.init_scope():  # out of a tf.function trace: the weight outlives it
                weight = self.add_weight(
                    name=name.replace("/", "."),
                    shape=tuple(tf.TensorShape(shape).as_list()),
                    dtype=tf.as_dtype(dtype).base_dtype.name,
                    initializer=initializer,
                    trainable=bool(trainable),
                    aggregation=_keras_aggregation(kwargs.get("aggregation")),
                )
        finally:
            self._creating = False
        self.tf1_absolute_names[name] = weight
        # A checkpoint dependency named by the TF1 name (Keras tracks weights held as attributes;
        # these are not), restored on creation when a checkpoint was restored before.
        self._track_trackable(weight, name=name, overwrite=True)
        return weight

    def __call__(self, *args, **kwargs):
        # The function's arguments mix tensors and Python values (a config object, `is_training`),
        # which Keras refuses within one argument: they travel as one opaque positional argument.
        training = kwargs.pop("training", None)
        return super().__call__(_Arguments(args, kwargs), training=training)

    def call(self, arguments, training=None):
        args, kwargs = arguments.args, dict(arguments.kwargs)
        if self._training_argument is not None:
            kwargs[self._training_argument] = bool(training)
        store = _CallStore(self._held, self._from_store)
        with contextlib.ExitStack() as stack:
            stack.enter_context(_fresh_variable_scopes())
            stack.enter_context(_vs.with_variable_store(store))
            stack.enter_context(tf.variable_creator_scope(self._creator))
            outputs = self._function(*args, **kwargs)
        if self._regularization_losses:
            for loss in store.regularization_losses:
                self.add_loss(loss)
        return outputs


def _keras_aggregation(aggregation) -> str:
    names = {
        tf.VariableAggregation.SUM: "sum",
        tf.VariableAggregation.MEAN: "mean",
        tf.VariableAggregation.ONLY_FIRST_REPLICA: "only_first_replica",
    }
    return names.get(aggregation, "none") if aggregation is not None else "none"


def _layer_scope(name: str | None, default_name: str, reuse):
    """The variable scope TF1's `tf.layers` base layer opened: the given name (uniquified unless
    reusing), or the layer's default name uniquified (`dense`, `dense_1`, ...)."""
    if reuse:
        return tf.compat.v1.variable_scope(name or default_name, reuse=reuse)
    return tf.compat.v1.variable_scope(None, default_name=name or default_name)


def _bias(units, dtype, initializer, regularizer, trainable):
    """A `tf.layers` layer's `<scope>/bias` of shape [units] (zeros unless given an initializer)."""
    return tf.compat.v1.get_variable(
        "bias",
        shape=[units],
        dtype=dtype,
        initializer=initializer if initializer is not None else tf.compat.v1.zeros_initializer(),
        regularizer=regularizer,
        trainable=trainable,
    )


def dense(
    inputs,
    units,
    activation=None,
    use_bias=True,
    kernel_initializer=None,
    bias_initializer=None,
    kernel_regularizer=None,
    bias_regularizer=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """`tf.compat.v1.layers.dense`: `<scope>/kernel` (default initializer: `get_variable`'s,
    glorot uniform) and `<scope>/bias` (zeros); matmul (tensordot over the last axis for rank > 2),
    bias_add, activation. `units` as TF1's Keras layer took it: any number (`units=hidden / 4`)."""
    units = units if isinstance(units, int) else int(units)
    inputs = tf.convert_to_tensor(inputs)
    dtype = inputs.dtype.base_dtype if inputs.dtype.is_floating else tf.float32
    with _layer_scope(name, "dense", reuse):
        kernel = tf.compat.v1.get_variable(
            "kernel",
            shape=[inputs.shape[-1], units],
            dtype=dtype,
            initializer=kernel_initializer,
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        bias = None
        if use_bias:
            bias = _bias(units, dtype, bias_initializer, bias_regularizer, trainable)
        inputs = tf.cast(inputs, dtype)
        rank = inputs.shape.rank
        if rank is None or rank == 2:
            outputs = tf.matmul(inputs, kernel)
        else:
            outputs = tf.tensordot(inputs, kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape[:-1].concatenate([units]))
        if bias is not None:
            outputs = tf.nn.bias_add(outputs, bias)
        return activation(outputs) if activation is not None else outputs


def conv2d(
    inputs,
    filters,
    kernel_size,
    strides=(1, 1),
    padding="valid",
    data_format="channels_last",
    dilation_rate=(1, 1),
    activation=None,
    use_bias=True,
    kernel_initializer=None,
    bias_initializer=None,
    kernel_regularizer=None,
    bias_regularizer=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """`tf.compat.v1.layers.conv2d`: `<scope>/kernel` `[kh, kw, in, filters]` (glorot uniform by
    default), `<scope>/bias` (zeros); `tf.nn.convolution`, bias_add, activation. A float `filters`
    (`filters=channels / 4`) is its int, as TF1's Keras layer made it."""
    filters = int(filters) if isinstance(filters, float) else filters
    inputs = tf.convert_to_tensor(inputs)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    channels_last = data_format == "channels_last"
    channels = inputs.shape[-1] if channels_last else inputs.shape[1]
    with _layer_scope(name, "conv2d", reuse):
        kernel = tf.compat.v1.get_variable(
            "kernel",
            shape=[*pair(kernel_size), channels, filters],
            dtype=inputs.dtype,
            initializer=kernel_initializer,
            regularizer=kernel_regularizer,
            trainable=trainable,
        )
        outputs = tf.nn.convolution(
            inputs,
            kernel,
            strides=pair(strides),
            padding=padding.upper(),
            dilations=pair(dilation_rate),
            data_format="NHWC" if channels_last else "NCHW",
        )
        if use_bias:
            bias = _bias(filters, inputs.dtype, bias_initializer, bias_regularizer, trainable)
            outputs = tf.nn.bias_add(outputs, bias, data_format="NHWC" if channels_last else "NCHW")
        return activation(outputs) if activation is not None else outputs


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """`tf.compat.v1.layers.dropout`: the identity unless `training` (TF1's default: False)."""
    if not training:
        return tf.identity(inputs) if tf.is_tensor(inputs) else tf.convert_to_tensor(inputs)
    return tf.nn.dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed, name=name)


def layer_norm(
    inputs,
    center=True,
    scale=True,
    activation_fn=None,
    reuse=None,
    variables_collections=None,
    outputs_collections=None,
    trainable=True,
    begin_norm_axis=1,
    begin_params_axis=-1,
    scope=None,
):
    """`tf.contrib.layers.layer_norm`: `<scope or LayerNorm>/beta` (zeros) and `/gamma` (ones) over
    the axes from `begin_params_axis`, moments over the axes from `begin_norm_axis`, epsilon 1e-12.
    (`variables_collections`/`outputs_collections` named graph collections; nothing reads them.)"""
    inputs = tf.convert_to_tensor(inputs)
    rank = inputs.shape.rank
    if rank is None:
        raise ValueError(f"layer_norm needs inputs of known rank, got {inputs}")
    params_shape = inputs.shape[begin_params_axis % rank :]
    if not params_shape.is_fully_defined():
        raise ValueError(f"layer_norm: axes from {begin_params_axis} of {inputs.shape} must be known")
    with tf.compat.v1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
        beta = gamma = None
        if center:
            beta = tf.compat.v1.get_variable(
                "beta", shape=params_shape, dtype=inputs.dtype,
                initializer=tf.compat.v1.zeros_initializer(), trainable=trainable,
            )
        if scale:
            gamma = tf.compat.v1.get_variable(
                "gamma", shape=params_shape, dtype=inputs.dtype,
                initializer=tf.compat.v1.ones_initializer(), trainable=trainable,
            )
        norm_axes = list(range(begin_norm_axis % rank, rank))
        mean, variance = tf.nn.moments(inputs, norm_axes, keepdims=True)
        outputs = tf.nn.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12)
        outputs.set_shape(inputs.shape)
        return activation_fn(outputs) if activation_fn is not None else outputs
