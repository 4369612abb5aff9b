"""TFM302: RunConfig / TPUConfig -> tfmigrate.runtime.RunConfig / TPUConfig."""

from __future__ import annotations

from tfmigrate.cst_on_demand import cst

from tfmigrate.names import canonical_name, in_its_parens
from tfmigrate.rule import RUNTIME_ALIAS, Rule
from tfmigrate.textpass import SourceView, TextPlan

_CONFIGS = {
    "estimator.tpu.RunConfig": "RunConfig",
    "estimator.tpu.TPUConfig": "TPUConfig",
    "estimator.RunConfig": "RunConfig",
}
_INPUT_PIPELINE = "estimator.tpu.InputPipelineConfig."


class TPUConfigToRuntime(Rule):
    """Turn `tf.estimator.tpu.RunConfig(...)`/`TPUConfig(...)` into the runtime's config objects.

    `tfmigrate.runtime.RunConfig` accepts every TF1 keyword and turns the ones that still mean
    something (`model_dir`, `save_checkpoints_steps`, `keep_checkpoint_max`, `tf_random_seed`,
    `iterations_per_loop`, ...) into strategy, compile settings and checkpoints; it reports the
    ones that have no TF2 meaning once at run time. `InputPipelineConfig.PER_HOST_V2` and friends
    become the strings the runtime understands.
    """

    CODE = "TFM302"
    SUMMARY = "tf.estimator.tpu.RunConfig/TPUConfig -> tfmigrate.runtime.RunConfig/TPUConfig"
    SAFE = True
    TRIGGERS = frozenset(_CONFIGS) | {_INPUT_PIPELINE}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.canonical(original.func)
        if key in _CONFIGS:
            self.mark_changed()
            tfm = self.ctx.need_runtime()
            return updated.with_changes(func=in_its_parens(cst.parse_expression(f"{tfm}.{_CONFIGS[key]}"), updated.func))
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        key = self.canonical(original)
        if key and key.startswith(_INPUT_PIPELINE) and key.count(".") == 3:
            self.mark_changed()
            return in_its_parens(cst.SimpleString(repr(key.rsplit(".", 1)[1])), updated)
        return updated

    def text_edits(self, view: SourceView) -> TextPlan | None:
        plan = TextPlan()
        qualify, data = self.ctx.names.qualify_dotted, view.lines.data
        for chain in view.chains:
            parts = chain.dotted.split(".")
            for size in range(1, len(parts) + 1):
                full = qualify(".".join(parts[:size]))
                key = canonical_name(full) if full else None
                if key is None:
                    continue
                if size == len(parts) and chain.call and key in _CONFIGS:
                    text = f"{RUNTIME_ALIAS}.{_CONFIGS[key]}"
                    end = chain.end
                elif not chain.bare and key.startswith(_INPUT_PIPELINE) and key.count(".") == 3:
                    text = repr(key.rsplit(".", 1)[1])
                    end = chain.end if size == len(parts) else chain.prefix_end(size, view.lines)
                else:
                    continue
                if chain.in_import or chain.in_fstring:
                    return None
                # A whole chain goes as the CST pass drops its node, whatever spaces, line breaks or
                # comments it is spelled with; a prefix only where it is spelled as its dotted name.
                if size < len(parts) and data[chain.start : end] != ".".join(parts[:size]).encode():
                    return None
                plan.replacements.append((chain.start, end, text))
                plan.changed = True
                plan.needs_runtime = plan.needs_runtime or text.startswith(RUNTIME_ALIAS)
        return plan
