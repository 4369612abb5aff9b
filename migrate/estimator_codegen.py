"""The code that replaces an estimator site and its calls (`SiteCodegen`, a mixin of
`EstimatorSiteRule`).

The site becomes the RunConfig's strategy and the model built in its scope (`site_statements`),
`est.train/evaluate/predict` the runtime's `fit`/`evaluate`/`predict_examples` (`call_text`),
`train_and_evaluate` and its specs and `export_saved_model` the runtime's (`spec_text`). What
differs by estimator class are the hooks `strategy_statement`, `steps_per_execution`,
`input_fn_batch_size` and `input_fn_placement`: Estimator's here, TPUEstimator's overrides in
`rules/tpu_estimator_to_keras.py`; TFM401 overrides `build_call`, `predicts` and `construct_loop`.
"""

from __future__ import annotations

from .cst_on_demand import cst

from . import ctl_codegen
from .estimator_scan import Site, call_arguments


class SiteCodegen:
    """Writes a site's replacement; the rule supplies `ctx`, `module`, `todo` and `site_by_stmt`."""

    def build_call(self, site: Site, steps_per_execution: str | None) -> str:
        """The expression that builds the compiled Keras model in the strategy's scope."""
        assert site.plan is not None
        fn_expr = site.args.get("model_fn")
        fn = fn_expr.value if isinstance(fn_expr, cst.Name) else site.plan.fn_name
        if steps_per_execution is None:
            return f"{fn}({self.params_code(site)})"
        return f"{fn}({self.params_code(site)}, steps_per_execution={steps_per_execution})"

    def predicts(self, site: Site) -> bool:
        """Whether the migrated model has a `predict_step` giving the TF1 predictions."""
        return site.plan is not None and site.plan.predictions is not None

    # -- what the estimator class decides: Estimator's here, TPUEstimator's in TFM301 ----------
    def strategy_statement(self, site: Site, config: str, tfm: str) -> str:
        """The statement making the strategy the model is built in (`config`: the RunConfig's code,
        "None" without one). Estimator: the one `RunConfig(train_distribute=...)` named, the default
        strategy without it."""
        return f"{site.strategy_var} = {tfm}.strategy_from_config({config})"

    def steps_per_execution(self, site: Site, config: str) -> str | None:
        """The code of the model's `steps_per_execution` (the ctl loop's steps per loop); None: one
        step per call, as Estimator ran."""
        return None

    def input_fn_batch_size(self, site: Site, method: str) -> str:
        """The `batch_size` `tfm.input_fn_data` gives the input_fn for `method`
        (train/evaluate/predict). Estimator: None, its input_fn batches by itself."""
        return "None"

    def input_fn_placement(self, site: Site) -> str:
        """The `tfm.input_fn_data` argument saying how the input_fn is called under the strategy.
        Estimator called it once per replica under a distribution strategy."""
        return "per_replica=True"

    @property
    def ctl_target(self) -> bool:
        """`--target ctl`: custom training loops (`ctl_codegen`) instead of Keras compile/fit."""
        return self.ctx.target == "ctl"

    def code_of(self, node: cst.CSTNode) -> str:
        """`node`'s code as this module spells it."""
        return self.module.code_for_node(node)

    def binding_lines(self, site: Site) -> list[str]:
        """The statements binding the estimator's `params` and `config` where they were expressions
        (the model and its calls both read them)."""
        lines: list[str] = []
        if site.params_var:
            lines.append(f"{site.params_var} = {self.code_of(site.args['params'])}")
        if site.config_var:
            lines.append(f"{site.config_var} = {self.code_of(site.args['config'])}")
        return lines

    @staticmethod
    def as_statements(lines: list[str], original: cst.SimpleStatementLine) -> list[cst.BaseStatement]:
        """`lines` as the statements replacing the site's `original`, its comments above the first."""
        body = cst.parse_module("\n".join(lines) + "\n").body
        first = body[0].with_changes(leading_lines=original.leading_lines)
        return [first, *body[1:]]

    def site_statements(self, site: Site, original: cst.SimpleStatementLine) -> list[cst.BaseStatement]:
        tfm = self.ctx.need_runtime()
        lines = self.binding_lines(site)
        config = self.config_code(site)
        if config != "None" and "tf_random_seed" in self.module_text():
            # TF1 seeded the graph before building it; Keras seeds layers when they are made.
            lines.append(f"{tfm}.seed_from_config({config})")
        lines.append(self.strategy_statement(site, config, tfm))
        steps_per_execution = self.steps_per_execution(site, config)
        build = self.build_call(site, steps_per_execution)
        if self.ctl_target:
            lines += self.construct_loop(site, config, build, steps_per_execution)
        else:
            lines.append(f"with {site.strategy_var}.scope():")
            lines.append(f"    {site.model_var} = {build}")
        if "warm_start_from" in site.args:
            # TF1 warm-started the trainable variables on a fresh start; the runtime does it when
            # training first builds the model, unless model_dir has a checkpoint.
            model = f"{site.model_var}.model" if self.ctl_target else site.model_var
            lines.append(f"{tfm}.warm_start({model}, {self.code_of(site.args['warm_start_from'])})")
        return self.as_statements(lines, original)

    def construct_loop(self, site: Site, config: str, build: str, steps_per_loop: str | None) -> list[str]:
        """`--target ctl`: the lines making the loop that replaces the estimator (the model_fn's
        generated loop class here; TFM401 drives a canned model with `tfm.ctl.CannedLoop`)."""
        plan = site.plan
        assert plan is not None
        model_dir = self.code_of(site.args["model_dir"]) if "model_dir" in site.args else None
        return [
            ctl_codegen.construct_loop(
                site.model_var,
                plan,
                site.strategy_var,
                params=self.params_code(site),
                config=config,
                model_dir=model_dir,
                steps_per_loop=steps_per_loop,
                cls=site.args["model_fn"].value if plan.closure else None,  # type: ignore[union-attr]
            )
        ]

    def config_code(self, site: Site) -> str:
        if site.config_var:
            return site.config_var
        if "config" in site.args:
            return self.code_of(site.args["config"])
        return "None"

    def params_code(self, site: Site) -> str:
        if site.params_var:
            return site.params_var
        if "params" in site.args:
            return self.code_of(site.args["params"])
        return "{}"

    def _bind_call(
        self, site: Site, method: str, call: cst.Call, keep_none: frozenset[str] = frozenset()
    ) -> dict[str, cst.BaseExpression] | None:
        """`call`'s arguments by parameter name; an explicit `None` dropped (the default), except
        for the parameters in `keep_none`, whose None is not the runtime's default."""
        bound = call_arguments(call, method)
        if bound is None:
            self.todo(f"`{site.est_name}.{method}(...)` has arguments tfmigrate cannot read: pass them as keyword arguments and run tfmigrate again")
            return None
        return {k: v for k, v in bound.items() if k in keep_none or not (isinstance(v, cst.Name) and v.value == "None")}

    def spec_text(self, site: Site, kind: str, call: cst.Call, original: cst.Call) -> str | None:
        """`TrainSpec`/`EvalSpec(input_fn, ...)` -> the runtime's, the input_fn as the estimator called
        it; a spec made before the estimator keeps its input_fn, wrapped at `train_and_evaluate`."""
        if id(site.stmt) not in self.site_by_stmt:
            return None
        # `EvalSpec(steps=None)`: until the input ends (EvalSpec's default is 100 steps).
        bound = self._bind_call(site, kind, call, frozenset({"steps"}) if kind == "eval_spec" else frozenset())
        if bound is None or "input_fn" not in bound:
            return None
        method = "train" if kind == "train_spec" else "evaluate"
        input_fn = bound.pop("input_fn")
        if id(original) in self.early_spec_calls:  # wrapped where train_and_evaluate runs
            args = [f"input_fn={self.code_of(input_fn)}"]
        else:
            args = [f"input_fn={self._data_expr(site, input_fn, method)}"]
        args += [f"{key}={self.code_of(value)}" for key, value in bound.items()]
        return f"tfm.{'TrainSpec' if kind == 'train_spec' else 'EvalSpec'}({', '.join(args)})"

    def _site_kwargs(self, site: Site) -> list[str]:
        out = []
        config = self.config_code(site)
        if config != "None":
            out.append(f"config={config}")
        if "model_dir" in site.args:
            out.append(f"model_dir={self.code_of(site.args['model_dir'])}")
        return out

    def _surface_text(self, site: Site, method: str, call: cst.Call) -> str | None:
        """train_and_evaluate and export_saved_model (a ctl loop keeps its config and model_dir)."""
        site_kwargs = [] if self.ctl_target else self._site_kwargs(site)
        if method == "train_and_evaluate":
            bound = self._bind_call(site, method, call)
            if bound is None or not {"train_spec", "eval_spec"} <= set(bound):
                return None
            args = [site.model_var]
            for kind in ("train_spec", "eval_spec"):
                spec = bound[kind]
                code = self.code_of(spec)
                if isinstance(spec, cst.Name) and (id(site), spec.value) in self.early_specs:
                    # Made before the estimator: the params/config its input_fn is called with are bound now.
                    method = "train" if kind == "train_spec" else "evaluate"
                    code = f"{code}.with_input_fn_data({', '.join(self._data_kwargs(site, method))})"
                args.append(code)
            return f"tfm.train_and_evaluate({', '.join(args + site_kwargs)})"
        bound = self._bind_call(site, method, call)
        if bound is None or not {"export_dir_base", "serving_input_receiver_fn"} <= set(bound):
            return None
        bound.pop("strip_default_attrs", None)  # TF1 graph detail; TF2 SavedModels have none
        args = [f"{key}={self.code_of(value)}" for key, value in bound.items()]
        if self.ctl_target:
            return f"{site.model_var}.export_saved_model({', '.join(args)})"
        return f"tfm.export_saved_model({', '.join([site.model_var] + args + site_kwargs)})"

    def standalone_lacks(self, what: str, at: cst.CSTNode | None = None) -> bool:
        """`--standalone` loops carry no hook machinery: say so where the program needs it."""
        if self.ctl_target and self.ctx.standalone:
            message = f"{what} needs the hooks and listeners of the runtime's EstimatorLoop: migrate without --standalone"
            self.todo(message, at=at)
            return True
        return False

    def call_text(self, site: Site, method: str, call: cst.Call) -> str | None:
        tfm = "tfm"
        if method in ("train_and_evaluate", "export_saved_model", "export_savedmodel"):
            if method == "train_and_evaluate" and self.standalone_lacks("`train_and_evaluate`"):
                return None
            if method != "train_and_evaluate" and self.ctl_target and self.ctx.standalone:
                self.todo(f"`{method}` needs the runtime's `EstimatorLoop.export_saved_model`: migrate without --standalone")
                return None
            return self._surface_text(site, method, call)
        if method == "predict" and not self.predicts(site):
            self.todo(
                f"`{site.est_name}.predict(...)`: model_fn has no PREDICT branch that tfmigrate could migrate: give it a "
                "`mode == ModeKeys.PREDICT` branch ending in `return EstimatorSpec(mode, predictions=...)`, or predict with the Keras model by hand"
            )
            return None
        bound = self._bind_call(site, method, call)
        if bound is None:
            return None
        if "input_fn" not in bound:
            return None
        args = [site.model_var, self._data_expr(site, bound["input_fn"], method)]
        if self.ctl_target:
            if {"hooks", "saving_listeners"} & set(bound) and self.standalone_lacks(f"`{method}(hooks=...)`"):
                return None
            return ctl_codegen.call_loop(site.model_var, method, args[1], bound, self.code_of)
        for key in ("steps", "max_steps", "predict_keys", "yield_single_examples", "hooks", "saving_listeners", "name", "checkpoint_path"):
            if key in bound:
                args.append(f"{key}={self.code_of(bound[key])}")
        args += self._site_kwargs(site)
        fn = {"train": "fit", "evaluate": "evaluate", "predict": "predict_examples"}[method]
        return f"{tfm}.{fn}({', '.join(args)})"

    def _data_expr(self, site: Site, input_fn: cst.BaseExpression, method: str) -> str:
        """`tfm.input_fn_data(input_fn, ...)`: the input_fn called as the estimator called it for `method`."""
        return f"tfm.input_fn_data({', '.join([self.code_of(input_fn), *self._data_kwargs(site, method)])})"

    def _data_kwargs(self, site: Site, method: str) -> list[str]:
        """The keyword arguments of `tfm.input_fn_data` for the estimator's `method`."""
        data_args = [f"batch_size={self.input_fn_batch_size(site, method)}"]
        if "params" in site.args:
            data_args.append(f"params={self.params_code(site)}")
        if method == "evaluate":
            data_args.append('mode="eval"')
        elif method == "predict":
            data_args.append('mode="infer"')
        data_args.append(self.input_fn_placement(site))
        if self.config_code(site) != "None":
            data_args.append(f"config={self.config_code(site)}")
        return data_args
