"""Keras optimizers that reproduce TF1 `tf.compat.v1.train.*Optimizer` updates to float32 rounding.

Keras 3 and TF1 write the same formulas, but not the same float32 arithmetic, and adaptive
optimizers amplify the difference (Adam normalises every update, so a few ulps in its bias
correction become ~5e-6 relative in the weights after 30 steps; measured). The classes here keep
TF1's arithmetic:

  * `Adam`: TF1 keeps `beta1_power`/`beta2_power` as float32 variables multiplied by beta once per
    step (Keras computes `beta ** t`), and computes `1 - beta` in float32 (Keras in float64, then
    rounds). Default `epsilon=1e-8` as in TF1 (Keras: 1e-7).
  * `Momentum`: TF1 accumulates raw gradients (`a = m*a + g; w -= lr*a`) where Keras SGD
    accumulates lr-scaled steps (`v = m*v - lr*g; w += v`). With a constant learning rate the two
    agree (3e-7); with a learning-rate schedule TF1 rescales the whole history by the new rate and
    they differ by tens of percent.
  * `RMSProp`: TF1 starts the mean-square slot at 1 (Keras: 0), uses epsilon 1e-10 inside the
    square root, and always runs the momentum form (`mom = m*mom + lr*g/sqrt(ms+eps); w -= mom`).

  * `AdamWeightDecay`: BERT's hand-written `AdamWeightDecayOptimizer` (a `tf.train.Optimizer`
    subclass copied into most BERT-derived programs): Adam without bias correction, epsilon outside
    the square root, and weight decay added to the update, not the loss, except for variables whose
    TF1 name matches `exclude_from_weight_decay`.

Sparse gradients (`tf.IndexedSlices`, from embedding lookups and gathers) take TF1's sparse
kernels: duplicate indices are summed first; Momentum and RMSProp then update only the rows the
gradient touches (Keras densifies, so untouched rows' slots decay and their weights keep moving);
Adam decays every row's moments and adds the scaled gradient to the touched rows, in TF1's order.
"""

from __future__ import annotations

import tensorflow as tf

from .tf1_variable_names import tf1_variable_names


def _sparse(gradient):
    """(summed values, unique indices) of an IndexedSlices gradient, as TF1 deduplicated them."""
    unique, positions = tf.unique(gradient.indices)
    values = tf.math.unsorted_segment_sum(gradient.values, positions, tf.shape(unique)[0])
    return values, unique


def _tf_variable(variable):
    """The tf.Variable under a Keras variable (optimizer slots), or the variable itself."""
    return variable.value if isinstance(variable, tf.keras.Variable) else variable


def _rows(variable, indices):
    return tf.gather(_tf_variable(variable), indices)


def _scatter(method, variable, values, indices):
    return getattr(_tf_variable(variable), method)(tf.IndexedSlices(values, indices))


class Adam(tf.keras.optimizers.Adam):
    """`tf.compat.v1.train.AdamOptimizer` as a Keras 3 optimizer (same numbers, float32 included).

    Args:
      learning_rate: float, schedule or callable, as for Keras `Adam`.
      beta_1: TF1 `beta1`.
      beta_2: TF1 `beta2`.
      epsilon: TF1 `epsilon` (default 1e-8, TF1's; Keras's default is 1e-7).
      **kwargs: the other Keras optimizer arguments (name, clipnorm, ...). `amsgrad` is not
        supported: TF1's AdamOptimizer has none.
    """

    #: (attribute holding per-variable slots, TF1 slot suffix, scale): `<v>/Adam`, `<v>/Adam_1`.
    TF1_SLOTS = (("_momentums", "Adam", 1.0), ("_velocities", "Adam_1", 1.0))
    #: (attribute holding the variables, TF1 name) of TF1 state outside the slots.
    TF1_NON_SLOT_VARIABLES = (("_beta_1_powers", "beta1_power"), ("_beta_2_powers", "beta2_power"))

    def tf1_slots(self):
        """What a TF1 checkpoint calls this optimizer's slots (read by `tf1_checkpoint`)."""
        return list(self.TF1_SLOTS)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-8, **kwargs):
        if kwargs.pop("amsgrad", False):
            raise ValueError("`amsgrad=True` has no TF1 AdamOptimizer counterpart; use keras.optimizers.Adam")
        kwargs.setdefault("name", "adam")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, **kwargs)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._beta_1_powers = []
        self._beta_2_powers = []
        for var in var_list:
            # One pair per variable: all pairs hold the same values, as TF1's single pair would.
            self._beta_1_powers.append(
                self.add_variable(shape=(), dtype=var.dtype, initializer=_constant(self.beta_1), name="beta1_power")
            )
            self._beta_2_powers.append(
                self.add_variable(shape=(), dtype=var.dtype, initializer=_constant(self.beta_2), name="beta2_power")
            )

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = tf.cast(learning_rate, dtype)
        if not isinstance(gradient, tf.IndexedSlices):
            gradient = tf.cast(gradient, dtype)
        index = self._get_variable_index(variable)
        m = self._momentums[index]
        v = self._velocities[index]
        beta1_power = self._beta_1_powers[index]
        beta2_power = self._beta_2_powers[index]
        one = tf.constant(1.0, dtype)
        beta1 = tf.constant(self.beta_1, dtype)
        beta2 = tf.constant(self.beta_2, dtype)
        epsilon = tf.constant(self.epsilon, dtype)
        alpha = lr * tf.sqrt(one - beta2_power) / (one - beta1_power)
        if isinstance(gradient, tf.IndexedSlices):
            values, indices = _sparse(gradient)
            self.assign(m, m * beta1)
            _scatter("scatter_add", m, values * (one - beta1), indices)
            self.assign(v, v * beta2)
            _scatter("scatter_add", v, (values * values) * (one - beta2), indices)
            self.assign_sub(variable, alpha * m / (tf.sqrt(v) + epsilon))
            self.assign(beta1_power, beta1_power * beta1)
            self.assign(beta2_power, beta2_power * beta2)
            return
        self.assign_add(m, (gradient - m) * (one - beta1))
        self.assign_add(v, (tf.square(gradient) - v) * (one - beta2))
        self.assign_sub(variable, (m * alpha) / (tf.sqrt(v) + epsilon))
        self.assign(beta1_power, beta1_power * beta1)
        self.assign(beta2_power, beta2_power * beta2)


def _constant(value):
    return tf.keras.initializers.Constant(float(value))


class Momentum(tf.keras.optimizers.Optimizer):
    """`tf.compat.v1.train.MomentumOptimizer` as a Keras 3 optimizer.

    Args:
      learning_rate: float, schedule or callable.
      momentum: TF1 `momentum`.
      use_nesterov: TF1 `use_nesterov`.
      **kwargs: other Keras optimizer arguments.
    """

    TF1_SLOTS = (("_accumulators", "Momentum", 1.0),)  # `<v>/Momentum`

    def tf1_slots(self):
        """What a TF1 checkpoint calls this optimizer's slots (read by `tf1_checkpoint`)."""
        return list(self.TF1_SLOTS)

    def __init__(self, learning_rate, momentum, use_nesterov=False, name="momentum", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.momentum = float(momentum)
        self.use_nesterov = bool(use_nesterov)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._accumulators = [self.add_variable_from_reference(v, "momentum") for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = tf.cast(learning_rate, dtype)
        momentum = tf.constant(self.momentum, dtype)
        accum = self._accumulators[self._get_variable_index(variable)]
        if isinstance(gradient, tf.IndexedSlices):
            values, indices = _sparse(gradient)
            values = tf.cast(values, dtype)
            rows = _rows(accum, indices) * momentum + values
            _scatter("scatter_update", accum, rows, indices)
            step = values * lr + rows * momentum * lr if self.use_nesterov else rows * lr
            _scatter("scatter_sub", variable, step, indices)
            return
        gradient = tf.cast(gradient, dtype)
        self.assign(accum, accum * momentum + gradient)
        if self.use_nesterov:
            self.assign_sub(variable, gradient * lr + accum * momentum * lr)
        else:
            self.assign_sub(variable, lr * accum)

    def get_config(self):
        config = super().get_config()
        config.update(momentum=self.momentum, use_nesterov=self.use_nesterov)
        return config


class RMSProp(tf.keras.optimizers.Optimizer):
    """`tf.compat.v1.train.RMSPropOptimizer` as a Keras 3 optimizer.

    Args:
      learning_rate: float, schedule or callable.
      decay: TF1 `decay` (Keras calls it `rho`).
      momentum: TF1 `momentum`.
      epsilon: TF1 `epsilon` (default 1e-10).
      centered: TF1 `centered`.
      **kwargs: other Keras optimizer arguments.
    """

    TF1_SLOTS = (("_mean_squares", "RMSProp", 1.0), ("_moms", "RMSProp_1", 1.0))
    #: centered: TF1's `mg` slot comes second, momentum third.
    TF1_SLOTS_CENTERED = (("_mean_squares", "RMSProp", 1.0), ("_mean_grads", "RMSProp_1", 1.0), ("_moms", "RMSProp_2", 1.0))

    def tf1_slots(self):
        """What a TF1 checkpoint calls this optimizer's slots (read by `tf1_checkpoint`)."""
        return list(self.TF1_SLOTS_CENTERED if self.centered else self.TF1_SLOTS)

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False, name="rmsprop", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.decay_rate = float(decay)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.centered = bool(centered)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._mean_squares = [self.add_variable_from_reference(v, "rms", initializer="ones") for v in var_list]
        self._moms = [self.add_variable_from_reference(v, "momentum") for v in var_list]
        self._mean_grads = (
            [self.add_variable_from_reference(v, "mg") for v in var_list] if self.centered else []
        )

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = tf.cast(learning_rate, dtype)
        index = self._get_variable_index(variable)
        ms, mom = self._mean_squares[index], self._moms[index]
        one = tf.constant(1.0, dtype)
        rho = tf.constant(self.decay_rate, dtype)
        momentum = tf.constant(self.momentum, dtype)
        epsilon = tf.constant(self.epsilon, dtype)
        if isinstance(gradient, tf.IndexedSlices):
            values, indices = _sparse(gradient)
            values = tf.cast(values, dtype)
            ms_rows = _rows(ms, indices)
            ms_rows = ms_rows + (tf.square(values) - ms_rows) * (one - rho)
            _scatter("scatter_update", ms, ms_rows, indices)
            if self.centered:
                mg = self._mean_grads[index]
                mg_rows = _rows(mg, indices)
                mg_rows = mg_rows + (values - mg_rows) * (one - rho)
                _scatter("scatter_update", mg, mg_rows, indices)
                denominator = ms_rows - tf.square(mg_rows) + epsilon
            else:
                denominator = ms_rows + epsilon
            mom_rows = _rows(mom, indices) * momentum + lr * values / tf.sqrt(denominator)
            _scatter("scatter_update", mom, mom_rows, indices)
            _scatter("scatter_sub", variable, mom_rows, indices)
            return
        gradient = tf.cast(gradient, dtype)
        self.assign(ms, ms + (tf.square(gradient) - ms) * (one - rho))
        if self.centered:
            mg = self._mean_grads[index]
            self.assign(mg, mg + (gradient - mg) * (one - rho))
            denominator = ms - tf.square(mg) + epsilon
        else:
            denominator = ms + epsilon
        self.assign(mom, mom * momentum + lr * gradient / tf.sqrt(denominator))
        self.assign_sub(variable, mom)

    def get_config(self):
        config = super().get_config()
        config.update(decay=self.decay_rate, momentum=self.momentum, epsilon=self.epsilon, centered=self.centered)
        return config


class AdamWeightDecay(tf.keras.optimizers.Optimizer):
    """BERT's `AdamWeightDecayOptimizer` as a Keras 3 optimizer, step for step.

    Per variable, in TF1's float32 order:
    `m = b1*m + (1-b1)*g`, `v = b2*v + (1-b2)*g^2`, `u = m / (sqrt(v) + eps)`,
    `u += weight_decay_rate * w` (unless excluded), `w -= lr * u`. No bias correction. Sparse
    gradients are made dense first, as TF1's `tf.multiply` did with them.

    Args:
      learning_rate: float, schedule or callable.
      weight_decay_rate: the decoupled weight decay.
      beta_1, beta_2, epsilon: as in the original (its defaults).
      exclude_from_weight_decay: regular expressions; a variable whose TF1 name matches one
        (`re.search`) gets no weight decay, BERT's `["LayerNorm", "layer_norm", "bias"]`.
      model: the model whose variables are trained; their TF1 names (the migrated model's
        `TF1_NAMES`, see `tfmigrate.runtime.tf1_checkpoint`) are what the expressions are matched
        against. Without it, a variable's Keras path is.
    """

    TF1_SLOTS = (("_m", "adam_m", 1.0), ("_v", "adam_v", 1.0))  # BERT named its slots by hand

    def tf1_slots(self):
        """What a TF1 checkpoint calls this optimizer's slots (read by `tf1_checkpoint`)."""
        return list(self.TF1_SLOTS)

    def __init__(
        self,
        learning_rate,
        weight_decay_rate=0.0,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=None,
        name="AdamWeightDecay",
        model=None,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.weight_decay_rate = float(weight_decay_rate)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.exclude_from_weight_decay = list(exclude_from_weight_decay or [])
        self._model = model
        self._tf1_names: dict[str, str] | None = None

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m = [self.add_variable_from_reference(v, "adam_m") for v in var_list]
        self._v = [self.add_variable_from_reference(v, "adam_v") for v in var_list]

    def tf1_name(self, variable) -> str:
        """The name the exclusion expressions are matched against."""
        if self._tf1_names is None:
            self._tf1_names = {}
            if self._model is not None:
                for name, weight in tf1_variable_names(self._model).items():
                    # Keras hands update_step the tf.Variable under a Keras variable: both keys.
                    self._tf1_names[weight.path] = name
                    self._tf1_names[_tf_variable(weight).name] = name
        path = getattr(variable, "path", None) or variable.name
        return self._tf1_names.get(path, path)

    def _decays(self, variable) -> bool:
        import re

        if not self.weight_decay_rate:
            return False
        name = self.tf1_name(variable)
        return not any(re.search(pattern, name) is not None for pattern in self.exclude_from_weight_decay)

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = tf.cast(learning_rate, dtype)
        gradient = tf.cast(tf.convert_to_tensor(gradient), dtype)
        index = self._get_variable_index(variable)
        m, v = self._m[index], self._v[index]
        next_m = tf.multiply(tf.constant(self.beta_1, dtype), m) + tf.multiply(tf.constant(1.0 - self.beta_1, dtype), gradient)
        next_v = tf.multiply(tf.constant(self.beta_2, dtype), v) + tf.multiply(
            tf.constant(1.0 - self.beta_2, dtype), tf.square(gradient)
        )
        update = next_m / (tf.sqrt(next_v) + tf.constant(self.epsilon, dtype))
        if self._decays(variable):
            update += tf.constant(self.weight_decay_rate, dtype) * variable
        self.assign(variable, variable - lr * update)
        self.assign(m, next_m)
        self.assign(v, next_v)

    def get_config(self):
        config = super().get_config()
        config.update(
            weight_decay_rate=self.weight_decay_rate,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            epsilon=self.epsilon,
            exclude_from_weight_decay=self.exclude_from_weight_decay,
        )
        return config
