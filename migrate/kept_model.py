"""A kept model_fn written as TF2: its strategy, a Keras model hosting it, and `tfm.fit`/`evaluate`.

Where a model_fn cannot be rewritten into Keras (yet), the estimator that runs it still becomes
the TF2 program TensorFlow's TPUEstimator guide describes, when the program uses the estimator
only to train, evaluate and predict in the function that builds it::

    strategy = tfm.make_strategy("auto", cluster_resolver=run_config.cluster, use_tpu=FLAGS.use_tpu)
    with strategy.scope():
      model = tfm.ModelFnModel(model_fn, config=run_config, use_tpu=FLAGS.use_tpu, train_batch_size=32)
      model.compile(steps_per_execution=run_config.iterations_per_loop)
    tfm.fit(model, train_input_fn, max_steps=num_train_steps)

The model_fn stays as written and runs on the runtime's strategy tier inside the strategy's
`tf.function` (`runtime/estimator/keras_model.py`); a user can then replace it piece by piece.
The estimator's own arguments go to `tfm.ModelFnModel` unchanged and its calls keep Estimator's
arguments (the input_fn, steps/max_steps, hooks), so nothing about the run changes.

The estimator stays `tfm.estimator.*` (`hosted.site_note`) where it is used otherwise (returned,
passed to `train_and_evaluate`, exported, kept in an attribute: those need the estimator object),
where the module shows what sends calls to TF1 graph mode (`runtime_tier.graph_mode_reasons`:
no strategy program to show there), and for arguments the site cannot read. Both `--target`s
write this form: the strategy tier's loop is the custom loop.
"""

from __future__ import annotations

from .cst_on_demand import cst

from .estimator_scan import Site, call_arguments, fresh_name

_CALLS = {"train": "fit", "evaluate": "evaluate", "predict": "predict_examples"}
_CALL_ARGS = {
    "train": ("steps", "max_steps", "hooks", "saving_listeners"),
    "evaluate": ("steps", "hooks", "checkpoint_path", "name"),
    "predict": ("predict_keys", "hooks", "checkpoint_path", "yield_single_examples"),
}


class KeptModelCodegen:
    """Writes a kept model_fn's site as TF2 (module doc); a mixin of `EstimatorSiteRule`, which
    supplies `ctx`, `module`, `call_rewrites`, `call_nodes`, `code_of`, `config_code`, `binding_lines`,
    `as_statements`, `strategy_statement`, `steps_per_execution` and `_bind_call`."""

    # Whether this rule's kept model_fns become `tfm.ModelFnModel` (Estimator, TPUEstimator).
    KEEPS_MODEL_FN_AS_MODEL = False
    # TPUEstimator: `use_tpu` is given to the model (TPUEstimator's calling conventions), True when absent.
    TPU_CALLING_CONVENTIONS = False

    def kept_model_fits(self, site: Site, graph_mode: list[str]) -> bool:
        """Whether `site`, kept as written, can be written as `tfm.ModelFnModel`: the estimator
        used only by train/evaluate/predict calls with an input_fn in its scope, read whole, with
        nothing sending calls to graph mode (`graph_mode`: the module's reasons)."""
        if not self.KEEPS_MODEL_FN_AS_MODEL or graph_mode or site.other_uses or "model_fn" not in site.args:
            return False
        if len(site.stmt.body) != 1 or any(arg in site.args for arg in self.UNMIGRATED_ARGS):  # type: ignore[attr-defined]
            return False
        calls = {key: method for key, (entry_site, method) in self.call_rewrites.items() if entry_site is site}  # type: ignore[attr-defined]
        if not calls or any(method not in _CALLS for method in calls.values()):
            return False
        # (`_find_uses` found these calls in the site's scope, and kept each node)
        return all(_reads_input_fn(self.call_nodes[key], method) for key, method in calls.items())  # type: ignore[attr-defined]

    def kept_model_names(self, site: Site) -> None:
        """The model's and strategy's names: `model`/`strategy` unless the scope has them (one
        name on both targets)."""
        site.model_var = fresh_name("model", self._names_taken(site), site.est_name)  # type: ignore[attr-defined]

    def kept_model_statements(self, site: Site, original: cst.SimpleStatementLine) -> list[cst.BaseStatement]:
        tfm = self.ctx.need_runtime()  # type: ignore[attr-defined]
        lines = self.binding_lines(site)  # type: ignore[attr-defined]
        config = self.config_code(site)  # type: ignore[attr-defined]
        lines.append(self.strategy_statement(site, config, tfm))  # type: ignore[attr-defined]
        arguments = [self.code_of(site.args["model_fn"])]  # type: ignore[attr-defined]
        for key, value in site.args.items():
            if key == "model_fn":
                continue
            if key == "params" and site.params_var:
                arguments.append(f"params={site.params_var}")
            elif key == "config" and site.config_var:
                arguments.append(f"config={site.config_var}")
            else:
                arguments.append(f"{key}={self.code_of(value)}")  # type: ignore[attr-defined]
        if self.TPU_CALLING_CONVENTIONS and "use_tpu" not in site.args:
            arguments.append("use_tpu=True")  # (TPUEstimator's default)
        steps = self.steps_per_execution(site, config)  # type: ignore[attr-defined]
        lines.append(f"with {site.strategy_var}.scope():")
        lines.append(f"    {site.model_var} = {tfm}.ModelFnModel({', '.join(arguments)})")
        lines.append(f"    {site.model_var}.compile({'' if steps is None else f'steps_per_execution={steps}'})")
        return self.as_statements(lines, original)  # type: ignore[attr-defined]

    def kept_model_call_text(self, site: Site, method: str, call: cst.Call) -> str | None:
        """`est.train(input_fn, ...)` -> `tfm.fit(model, input_fn, ...)` (evaluate, predict_examples
        likewise), Estimator's arguments kept."""
        bound = self._bind_call(site, method, call)  # type: ignore[attr-defined]
        if bound is None or "input_fn" not in bound:
            return None
        args = [site.model_var, self.code_of(bound["input_fn"])]  # type: ignore[attr-defined]
        args += [f"{key}={self.code_of(bound[key])}" for key in _CALL_ARGS[method] if key in bound]  # type: ignore[attr-defined]
        return f"tfm.{_CALLS[method]}({', '.join(args)})"


def _reads_input_fn(call: cst.Call, method: str) -> bool:
    """Whether `call` (`est.<method>(...)`) passes its arguments readably, the input_fn among them."""
    bound = call_arguments(call, method)
    return bound is not None and "input_fn" in bound
