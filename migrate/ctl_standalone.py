"""The host side of a `--target ctl --standalone` loop: what `runtime.ctl.EstimatorLoop` does, as source.

`--standalone` loops carry TF1 Estimator's `train(steps|max_steps)`/`evaluate`/`predict` contract
themselves instead of deriving from the runtime's `EstimatorLoop`: the global step, `steps_per_loop`
steps per `train_steps` call, checkpoints (`tf.train.CheckpointManager`, the chief writing into
`model_dir` and other workers into temporary directories they delete, as the TF multi-worker guide
writes it), restoring the latest TF2 checkpoint, the data distributed over the replicas, and
ParameterServerStrategy's `ClusterCoordinator`. A TF1 checkpoint in `model_dir` is refused with an
error (its loader is the runtime's `tf1_checkpoint`).

The text is written with four-space indents and one level of class indentation; `host_methods`
re-indents it to the module's unit.
"""

from __future__ import annotations

_HOST = '''
    # -- the host side: TF1 Estimator's train/evaluate/predict contract ---------------------------

    def _init_loop(self, strategy, *, config, model_dir, steps_per_loop):
        self.strategy = strategy
        self.config = config
        model_dir = model_dir if model_dir is not None else getattr(config, "model_dir", None)
        self.model_dir = None if model_dir is None or "://" in str(model_dir) else os.path.abspath(model_dir)
        self.steps_per_loop = int(steps_per_loop)
        self.eval_metrics = []
        self._prepared = False

    @property
    def global_step(self):
        """TF1's global step: the optimizer's `iterations`."""
        return int(self.optimizer.iterations.numpy())

    def _prepare(self, data):
        """Seeds, builds every variable from the first batch and restores `model_dir`'s latest checkpoint, once."""
        if self._prepared:
            return
        if getattr(self.config, "tf_random_seed", None) is not None:
            {tf}.keras.utils.set_random_seed(self.config.tf_random_seed)
        if not getattr(data, "per_replica", True):
            data = data.global_dataset(self.strategy.num_replicas_in_sync)
        elif not isinstance(data, {tf}.data.Dataset):
            data = data({tf}.distribute.InputContext())
        features, _, _ = {tf}.keras.utils.unpack_x_y_sample_weight(next(iter(data.take(1))))
        with self.strategy.scope():
            self.model(features, training=False)
            self.optimizer.build(self.model.trainable_variables)
        path = {tf}.train.latest_checkpoint(self.model_dir) if self.model_dir else None
        if path is not None:
            if "_CHECKPOINTABLE_OBJECT_GRAPH" not in {tf}.train.load_checkpoint(path).get_variable_to_shape_map():
                raise ValueError(
                    f"{{path}} is a TF1 (Estimator) checkpoint; load it with "
                    "tfmigrate.runtime.tf1_checkpoint.load_tf1_checkpoint, or migrate without --standalone."
                )
            learning_rate = self.optimizer.learning_rate
            kept = learning_rate.numpy() if hasattr(learning_rate, "assign") else None
            self.checkpoint.restore(path).assert_existing_objects_matched().expect_partial()
            if kept is not None:  # TF1 graphs held the learning rate as a constant.
                learning_rate.assign(kept)
        self._prepared = True

    def _distribute(self, data, limit=None):
        """Global batches (a dataset, or an `input_fn` giving them) split across the replicas; an
        `input_fn` giving per-replica batches called once per input pipeline."""
        if not getattr(data, "per_replica", True):
            data = data.global_dataset(self.strategy.num_replicas_in_sync)
        if isinstance(data, {tf}.data.Dataset):
            if limit is not None:
                data = data.take(limit)
            options = {tf}.data.Options()
            options.experimental_distribute.auto_shard_policy = {tf}.data.experimental.AutoShardPolicy.DATA
            return self.strategy.experimental_distribute_dataset(data.with_options(options))

        def dataset_fn(input_context):
            dataset = data(input_context)
            per_step = max(1, input_context.num_replicas_in_sync // input_context.num_input_pipelines)
            return dataset if limit is None else dataset.take(limit * per_step)

        return self.strategy.distribute_datasets_from_function(dataset_fn)

    def _is_chief(self):
        """The TF multi-worker guide's test: no cluster, the "chief" task, or worker 0 without one."""
        resolver = getattr(self.strategy, "cluster_resolver", None)
        if resolver is None or resolver.task_type in (None, "chief"):
            return True
        return resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in resolver.cluster_spec().jobs

    def _checkpoint_manager(self):
        """Chief: `model_dir`; another worker: its own temporary directory (deleted after each save)."""
        directory = self.model_dir
        if not self._is_chief():
            resolver = self.strategy.cluster_resolver
            directory = os.path.join(directory, f"workertemp_{{resolver.task_type}}_{{resolver.task_id}}")
        max_to_keep = getattr(self.config, "keep_checkpoint_max", 5)
        return {tf}.train.CheckpointManager(self.checkpoint, directory, max_to_keep=max_to_keep or None, checkpoint_name="ckpt")

    def _save(self, manager):
        manager.save(checkpoint_number=self.global_step)
        if not self._is_chief():
            {tf}.io.gfile.rmtree(manager.directory)
        return self.global_step

    def train(self, data, *, steps=None, max_steps=None):
        """TF1 `Estimator.train`: `steps` more steps, or up to the global step `max_steps`, with
        checkpoints at the start, every `save_checkpoints_steps` steps and at the end."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both `steps` and `max_steps`.")
        self._prepare(data)
        start = self.global_step
        if max_steps is not None and start >= max_steps:
            return self
        limit = max_steps - start if max_steps is not None else steps
        manager = self._checkpoint_manager() if self.model_dir else None
        save_steps = getattr(self.config, "save_checkpoints_steps", None)
        saved = self._save(manager) if manager else None
        coordinator = None
        if isinstance(self.strategy, {tf}.distribute.experimental.ParameterServerStrategy):
            coordinator = {tf}.distribute.experimental.coordinator.ClusterCoordinator(self.strategy)
            iterator = iter(coordinator.create_per_worker_dataset(lambda: self._distribute(data)))
        else:
            iterator = iter(self._distribute(data, limit))
        done = 0
        while limit is None or done < limit:
            wanted = self.steps_per_loop if limit is None else min(self.steps_per_loop, limit - done)
            before = self.global_step
            if coordinator is not None:
                coordinator.schedule(self.train_steps, args=(iterator, {tf}.constant(wanted)))
                coordinator.join()
            else:
                self.train_steps(iterator, {tf}.constant(wanted))
            done += self.global_step - before
            if manager and save_steps and self.global_step >= saved + save_steps:
                saved = self._save(manager)
            if self.global_step - before < wanted:
                break  # The input ended, as TF1 training ends.
        if manager and self.global_step != saved:
            self._save(manager)
        return self

    def counted_test_step(self, batch):
        """`test_step` on one replica's batch, and 1.0 where that batch held examples, 0.0 where it
        was the empty one a last step leaves a replica (its loss counted 0)."""
        held = {tf}.cast({tf}.shape({tf}.nest.flatten(batch)[0])[0] > 0, {tf}.float32)
        loss = {tf}.cast(self.test_step(batch), {tf}.float32)
        return {tf}.math.multiply_no_nan(loss, held), held  # (0.0 where it held none, whatever the loss)

    def evaluate(self, data, *, steps=None):
        """TF1 `Estimator.evaluate`: `loss` (the mean of the batch losses), the metrics, `global_step`."""
        self._prepare(data)
        for metric in self.eval_metrics:
            metric.reset_state()
        iterator = iter(self._distribute(data, steps))
        loss_sum, batches, held = 0.0, 0, 0.0
        while steps is None or batches < steps:
            wanted = self.steps_per_loop if steps is None else min(self.steps_per_loop, steps - batches)
            total, ran, counted = self.test_steps(iterator, {tf}.constant(wanted))
            loss_sum, batches, held = loss_sum + float(total), batches + int(ran), held + float(counted)
            if int(ran) < wanted:
                break
        results = {{"loss": loss_sum / max(held, 1.0)}}
        results.update({{metric.name: float(metric.result()) for metric in self.eval_metrics}})
        results["global_step"] = self.global_step
        return results
'''

_PREDICT = '''
    def predict(self, data, *, predict_keys=None, yield_single_examples=True):
        """TF1 `Estimator.predict`: one dict of predictions per example."""
        self._prepare(data)
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        for batch in self._distribute(data):
            outputs = {tf}.nest.map_structure(lambda value: value.numpy(), self.distributed_predict_step(batch))
            if predict_keys is not None:
                outputs = {{key: outputs[key] for key in predict_keys}}
            if not yield_single_examples:
                yield outputs
                continue
            for index in range(len({tf}.nest.flatten(outputs)[0])):
                yield {tf}.nest.map_structure(lambda array: array[index], outputs)
'''


def host_methods(unit: str, tf: str, *, predict: bool) -> list[str]:
    """The host-side methods of a standalone loop class, indented with the module's `unit`."""
    text = _HOST + (_PREDICT if predict else "")
    lines = []
    for line in text.format(tf=tf).splitlines():
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        lines.append(unit * depth + stripped if stripped else "")
    return lines
