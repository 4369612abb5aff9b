"""`CannedModel`: a canned estimator as a Keras model (its layers, TF1 variable names, TF1 checkpoint loading) and its BatchNormalization."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from .. import feature_columns as fc
from .. import losses as tf1_losses
from .. import optimizers as tf1_optimizers
from .. import tf1_checkpoint

keras = tf.keras
from .heads import Head

__all__ = ["BatchNormalization", "CannedModel"]


# -- the model -----------------------------------------------------------------------------------


class BatchNormalization(keras.layers.Layer):
    """The canned DNN's `batch_norm=True` layer: Keras 2's non-fused BatchNormalization on 2-D input
    (`tf.nn.moments`, `tf.nn.batch_normalization`, moving averages by `var -= (var - value) * (1 -
    momentum)`), momentum 0.999 and epsilon 0.001. Keras 3's computes the variance as
    `E[x^2] - E[x]^2` and normalises in another order (measured: 2.6e-6 relative after 30 Adagrad
    steps with Keras 3's layer). With this layer Adagrad matches TF 2.15; Adam does not, because
    the bias of a hidden unit whose ReLU is always on gets a rounding-noise gradient (zero in exact
    arithmetic) that Adam scales to full steps (see docs/migrations.md, TFM401)."""

    def __init__(self, momentum=0.999, epsilon=0.001, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.epsilon = epsilon

    def build(self, input_shape):
        dim = int(input_shape[-1])
        self.gamma = self.add_weight(name="gamma", shape=(dim,), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(dim,), initializer="zeros")
        self.moving_mean = self.add_weight(name="moving_mean", shape=(dim,), initializer="zeros", trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=(dim,), initializer="ones", trainable=False)
        self.built = True

    def call(self, inputs, training=False):
        if training:
            mean, variance = tf.nn.moments(inputs, axes=[0], keepdims=False)
            decay = tf.constant(1.0 - self.momentum, tf.float32)
            for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
                variable.assign_sub((tf.convert_to_tensor(variable) - value) * decay)
        else:
            mean, variance = self.moving_mean, self.moving_variance
        return tf.nn.batch_normalization(inputs, mean, variance, self.beta, self.gamma, self.epsilon)



_V2_SLOTS = {
    "Adagrad": "accumulator",
    "Ftrl": "accumulator",
    "Ftrl_1": "linear",
    "Adam": "m",
    "Adam_1": "v",
    "Momentum": "momentum",
    "RMSProp": "rms",
    "RMSProp_1": "momentum",
}


class CannedModel(keras.Model):
    """A canned estimator as a Keras model (build it with the estimator-named functions below).

    `call` returns the logits; `train_step` minimises the head's training loss with each part's
    optimizer (DNN and linear parts have their own in wide & deep; the first one's `iterations`
    is the global step); `test_step` reports the head's metrics as `evaluate` keys them;
    `predict_step` returns the head's predictions dict.
    """

    def __init__(
        self,
        head: Head,
        *,
        api: str,
        dnn: dict | None = None,
        linear: dict | None = None,
        baseline: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.head = head
        self.api = api
        self.parts: list[str] = []
        units = head.logits_dimension
        self._tf1: dict[str, Any] = {}
        self._part_variables: dict[str, list[Any]] = {}
        if dnn is not None:
            self.parts.append("dnn")
            self.dnn_input = fc.InputLayer(dnn["feature_columns"], name="input_layer")
            width = self.dnn_input.output_dim
            names = fc.scoped_tf1_names("dnn/input_from_feature_columns/input_layer", self.dnn_input.tf1_names)
            if api == "v1":
                # A v2 shared table is created in the variable scope of its first use: a v1 DNN's
                # `dnn/input_from_feature_columns` (a v2 DNN, a Keras model, has none).
                absolute = {k[1:] for k in self.dnn_input.tf1_names if k.startswith("/")}
                names = {(f"dnn/input_from_feature_columns/{k}" if k in absolute else k): v for k, v in names.items()}
            self.hidden = []
            self.dropouts = []
            self.batch_norms = []
            for index, size in enumerate(dnn["hidden_units"]):
                layer = keras.layers.Dense(size, activation=dnn["activation_fn"], name=f"hiddenlayer_{index}")
                layer.build((None, width))
                width = size
                self.hidden.append(layer)
                names[f"dnn/hiddenlayer_{index}/kernel"] = layer.kernel
                names[f"dnn/hiddenlayer_{index}/bias"] = layer.bias
                if dnn["dropout"] is not None:
                    self.dropouts.append(keras.layers.Dropout(dnn["dropout"]))
                if dnn["batch_norm"]:
                    norm = BatchNormalization(momentum=0.999, epsilon=0.001, name=f"batchnorm_{index}")
                    norm.build((None, size))
                    self.batch_norms.append(norm)
                    scope = f"dnn/hiddenlayer_{index}/batchnorm_{index}"
                    names[f"{scope}/gamma"] = norm.gamma
                    names[f"{scope}/beta"] = norm.beta
                    names[f"{scope}/moving_mean"] = norm.moving_mean
                    names[f"{scope}/moving_variance"] = norm.moving_variance
            self.dnn_logits = keras.layers.Dense(units, name="logits")
            self.dnn_logits.build((None, width))
            names["dnn/logits/kernel"] = self.dnn_logits.kernel
            names["dnn/logits/bias"] = self.dnn_logits.bias
            self._tf1.update(names)
            # TF 2.15's v2 DNN trained its Keras model's variables only: a v2 shared embedding table
            # (`tf.feature_column.shared_embeddings`, created outside that model) kept its
            # initial values and had no optimizer slot.
            untrained = {id(v) for k, v in self.dnn_input.tf1_names.items() if k.startswith("/")} if api == "v2" else set()
            self._part_variables["dnn"] = [v for v in names.values() if id(v) not in untrained]
        if linear is not None:
            self.parts.append("linear")
            self.linear_model = fc.LinearModel(
                linear["feature_columns"], units=units, sparse_combiner=linear["sparse_combiner"], name="linear_model"
            )
            names = fc.scoped_tf1_names("linear/linear_model", self.linear_model.tf1_names)
            self._tf1.update(names)
            self._part_variables["linear"] = list(names.values())
        if baseline:
            self.parts.append("baseline")
            self.baseline_bias = self.add_weight(name="bias", shape=(units,), initializer="zeros")
            self._tf1["baseline/bias"] = self.baseline_bias
            self._part_variables["baseline"] = [self.baseline_bias]
        self._eval_metrics = head.metrics()
        self.part_optimizers: dict[str, Any] = {}
        self.built = True

    # -- forward -----------------------------------------------------------------------------

    def call(self, features, training=False):
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
        logits = None
        if "dnn" in self.parts:
            net = self.dnn_input(features)
            for index, layer in enumerate(self.hidden):
                net = layer(net)
                if self.dropouts and training:
                    net = self.dropouts[index](net, training=True)
                if self.batch_norms:
                    net = self.batch_norms[index](net, training=training)
            logits = self.dnn_logits(net)
        if "linear" in self.parts:
            linear_logits = self.linear_model(features)
            logits = linear_logits if logits is None else logits + linear_logits
        if "baseline" in self.parts:
            some = next(iter(features.values())) if features else None
            if isinstance(some, tf.SparseTensor):
                batch = some.dense_shape[0]
            elif some is not None:
                batch = tf.shape(some)[0]
            else:
                raise ValueError("BaselineClassifier/Regressor need at least one feature to know the batch size")
            logits = tf.tile(tf.expand_dims(tf.convert_to_tensor(self.baseline_bias), 0), [batch, 1])
        return logits

    # -- steps -------------------------------------------------------------------------------

    def set_optimizers(self, optimizers: dict[str, Any]) -> None:
        """The optimizer of each part (`dnn`, `linear`, `baseline`); the first is `model.optimizer`."""
        self.part_optimizers = dict(optimizers)
        for part, optimizer in self.part_optimizers.items():
            if part != self.parts[0]:
                setattr(self, f"{part}_optimizer", optimizer)

    def checkpointed_optimizers(self) -> list[Any]:
        """Every part's optimizer (`model.optimizer` first), each built on its part's trainable
        variables: what the model's checkpoints hold besides the model (`checkpoints.weights_from`
        snapshots them all)."""
        found = []
        for part in self.parts:
            optimizer = self.optimizer if part == self.parts[0] else self.part_optimizers.get(part)
            if optimizer is None:
                continue
            if not optimizer.built:
                optimizer.build([v for v in self._part_variables[part] if v.trainable])
            found.append(optimizer)
        return found

    def _head_losses(self, data, training):
        features, labels, _ = keras.utils.unpack_x_y_sample_weight(data)
        logits = self(features, training=training)
        labels = self.head.labels(labels)
        unreduced = self.head.unreduced_loss(labels, logits)
        weights = self.head.weights(features, unreduced)
        return labels, logits, unreduced, weights, self.head.training_loss(unreduced, weights)

    def train_step(self, data):
        with tf.GradientTape() as tape:
            _, _, _, _, loss = self._head_losses(data, training=True)
            scaled = tf1_losses.scale_loss_for_replicas(loss)
        # One gradient computation; each part's optimizer applies its share (TF1 grouped the
        # DNN's and the linear model's train ops).
        everything = [(part, v) for part in self.parts for v in self._part_variables[part] if v.trainable]
        gradients = tape.gradient(scaled, [v for _, v in everything])
        for part in self.parts:
            optimizer = self.optimizer if part == self.parts[0] else self.part_optimizers[part]
            pairs = [(g, v) for (p, v), g in zip(everything, gradients) if p == part]
            optimizer.apply_gradients(zip(_for_optimizer([g for g, _ in pairs], optimizer), [v for _, v in pairs]))
        return {"loss": loss}

    @property
    def metrics(self):
        return list(self._eval_metrics.values())

    def update_eval_metrics(self, data):
        """Updates the head's evaluation metrics with one batch; returns the batch's training loss."""
        labels, logits, unreduced, weights, loss = self._head_losses(data, training=False)
        self.head.update_metrics(self._eval_metrics, labels, logits, unreduced, weights, loss)
        return loss

    def eval_results(self):
        """The head's evaluation metrics keyed as the estimator's `evaluate` keyed them."""
        return self.head.results(self._eval_metrics)

    def test_step(self, data):
        self.update_eval_metrics(data)
        return self.eval_results()

    def predict_step(self, data):
        features, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        return self.head.predictions(self(features, training=False))

    # -- TF1 checkpoints ---------------------------------------------------------------------

    def tf1_variable_names(self) -> dict[str, Any]:
        """TF1 name -> variable, as the canned estimator named its variables."""
        return dict(self._tf1)

    def _slot_candidates(self, name: str, suffix: str, keys: set[str]) -> list[str]:
        if self.api == "v1":
            return [f"{name}/{suffix}", f"{name}/t_0/{suffix}", f"{name}/part_0/{suffix}"]
        slot = _V2_SLOTS.get(suffix, suffix)
        tail = f"/{name}/{slot}"
        return sorted(k for k in keys if k.startswith("training/") and k.endswith(tail))

    def load_tf1_checkpoint(self, path, *, assignment_map=None, include_optimizer=True, only_mapped=False):
        """Restores the canned estimator's TF1 checkpoint (weights, slots, global step) into the model.

        Called by `tfmigrate.runtime.tf1_checkpoint.load_tf1_checkpoint` (and so by `fit`/`evaluate`
        finding an Estimator's `model_dir`). `assignment_map`/`only_mapped` restrict it to the
        variables an `init_from_checkpoint`/`warm_start_from` covers.

        Raises:
          ValueError: a variable or slot is missing or has another shape (nothing is restored).
        """
        reader, shapes = tf1_checkpoint.open_checkpoint(path)
        keys = set(shapes)
        partitioned = tf1_checkpoint.partitioned_variables(shapes)
        plan: list[tuple[Any, str, float]] = []
        missing: list[str] = []

        def wanted(name: str) -> bool:
            return not only_mapped or tf1_checkpoint._mapped_name(name, assignment_map) is not None  # noqa: SLF001

        for name, variable in self._tf1.items():
            if not wanted(name):
                continue
            ckpt = tf1_checkpoint._apply_assignment_map(name, assignment_map)  # noqa: SLF001
            if ckpt not in keys and ckpt not in partitioned:
                missing.append(ckpt)
                continue
            plan.append((variable, ckpt, 1.0))
        optimizers = []
        if include_optimizer:
            for part in self.parts:
                optimizer = self.optimizer if part == self.parts[0] else self.part_optimizers.get(part)
                if optimizer is None:
                    continue
                optimizers.append(optimizer)
                if not optimizer.built:
                    optimizer.build([v for v in self._part_variables[part] if v.trainable])
                for attr, suffix, scale in tf1_checkpoint.slot_map(optimizer):
                    if self.api == "v2":
                        scale = 1.0  # Keras 2 kept Keras's own slot values
                    slots = getattr(optimizer, attr)
                    mine = {id(v) for v in self._part_variables[part]}
                    for name, variable in self._tf1.items():
                        if not variable.trainable or id(variable) not in mine or not wanted(name):
                            continue
                        found = [k for k in self._slot_candidates(name, suffix, keys) if k in keys]
                        if not found:
                            missing.append(f"optimizer slot {suffix} of {name}")
                            continue
                        plan.append((slots[optimizer._get_variable_index(variable)], found[0], scale))  # noqa: SLF001
        if missing:
            raise ValueError(
                f"TF1 checkpoint {path!r} does not hold every variable of the canned model; nothing was restored. "
                f"Missing: {', '.join(missing)}."
            )
        values = {}
        for variable, ckpt, _ in plan:
            values[ckpt] = tf1_checkpoint._read(reader, ckpt, partitioned)  # noqa: SLF001
            if tuple(values[ckpt].shape) != tuple(variable.shape):
                raise ValueError(
                    f"TF1 variable {ckpt!r} has shape {tuple(values[ckpt].shape)}, the model's has {tuple(variable.shape)}"
                )
        report = tf1_checkpoint.LoadReport(path=path)
        for variable, ckpt, scale in plan:
            variable.assign(values[ckpt] * scale if scale != 1.0 else values[ckpt])
            report.assigned[getattr(variable, "path", ckpt)] = ckpt
        if include_optimizer and "global_step" in keys and wanted("global_step"):
            step = int(reader.get_tensor("global_step"))
            report.global_step = step
            for optimizer in optimizers:
                optimizer.iterations.assign(step)
                if isinstance(optimizer, tf1_optimizers.Adam):
                    for key, powers in (("beta1_power", optimizer._beta_1_powers), ("beta2_power", optimizer._beta_2_powers)):  # noqa: SLF001
                        found = sorted(k for k in keys if k == key or k.endswith("/" + key))
                        if found:
                            for power in powers:
                                power.assign(reader.get_tensor(found[0]))
            report.assigned["iterations"] = "global_step"
        return report


def _for_optimizer(gradients, optimizer):
    """TF1's runtime optimizers take sparse gradients as TF1 did; Keras's are given dense ones
    (Keras 3 applies duplicate sparse indices one by one, TF1 summed them first; for Adagrad, Ftrl,
    SGD and Keras 2's Adam a zero gradient row is a no-op, so dense is what TF1 computed)."""
    if isinstance(optimizer, (tf1_optimizers.Adam, tf1_optimizers.Momentum, tf1_optimizers.RMSProp)):
        return gradients
    return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in gradients]
