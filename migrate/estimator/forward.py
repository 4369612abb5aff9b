"""The forward pass -> `Model.call`, with TF1 layer calls hoisted into Keras layers built once in
`Model.__init__` (`ForwardRewriter`), `tf.get_variable` -> `add_weight` (`_variable`), weights
whose shape reads a tensor's static shape -> deferred weights, TF1 initializers in layer
arguments -> Keras's (`InitializerRewriter`).
"""

from __future__ import annotations

import functools
import re

from ..cst_on_demand import Transformer, Visitor, cst

from ..names import names_in
from .analysis import Analysis
from .dataflow import Flow
from .plan import Layer, Stmt, StmtKind, Unsupported
from .syntax import CollectionReads, attr_name, bind_args, calls_any, collection_read, creates_layer, functional_layer, snake
from .tables import CONTRIB_DROP, CONTRIB_LAYERS, FUNCTIONAL_LAYERS, GET_VARIABLE_DROP, GET_VARIABLE_PARAMS, INITIALIZERS, INITIALIZER_DROP, LAYER_CLASSES, LAYER_DROP, REGULARIZATION_LOSS_FNS, REGULARIZERS, WEIGHTLESS_LAYERS, XAVIER
from ..cst_walk import walk


def _one_minus(keep_prob: str) -> str:
    """slim's `keep_prob` -> Keras's dropout `rate`, folded when it is a literal."""
    try:
        return repr(round(1.0 - float(keep_prob), 12))
    except ValueError:
        return f"1 - {keep_prob}"


def _static_shape_reads(node: cst.BaseExpression) -> set[str]:
    """The names `node` reads only through their static shape (`x.shape[-1]`,
    `x.get_shape().as_list()`); empty when it reads any of them otherwise."""
    shaped: set[str] = set()
    plain: set[str] = set()

    class Visit(Visitor):
        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            if attr.attr.value in ("shape", "get_shape") and isinstance(attr.value, cst.Name):
                shaped.add(attr.value.value)
                return False
            walk(attr.value, self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            walk(arg.value, self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            plain.add(name.value)

    walk(node, Visit())
    return shaped - plain


class _ShapeValue(Transformer):
    """`x.shape[-1].value` (TF1's Dimension) -> `x.shape[-1]` (an int in TF2)."""

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value == "value" and isinstance(updated.value, cst.Subscript):
            inner = updated.value.value
            while isinstance(inner, cst.Call):
                inner = inner.func
            if isinstance(inner, cst.Attribute) and inner.attr.value in ("shape", "get_shape", "as_list"):
                return updated.value
        return updated


class ForwardRewriter(Transformer):
    """Hoists TF1 layer calls into Keras layers built once; `mode == TRAIN` -> `training`."""

    def __init__(self, analyzer: Analysis) -> None:
        super().__init__()
        self.a = analyzer
        # (attr, names the constructor reads, (Keras class path, rendered arguments))
        self.layers: list[tuple[str, set[str], tuple[str, list[str]]]] = []
        self.uses_labels = False
        self.pending_ctors: set[int] = set()
        self.scope = ""  # the TF1 variable scope of the statement being rewritten
        self.refs = VariableRefs(analyzer)

    def _attr(self, base: str, cls: str) -> str:
        attr, tf1 = self.a.tf1_layer_name(base, self.scope)
        if attr != tf1 and cls not in WEIGHTLESS_LAYERS:
            self.a.tf1_names[attr] = tf1
        return attr

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self.refs.visit_Attribute(node)

    def visit_Arg(self, node: cst.Arg) -> bool:
        return self.refs.visit_Arg(node)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if self.a.labels and original.value == self.a.labels:
            self.uses_labels = True
        return self.refs.leave_Name(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return _ShapeValue().leave_Attribute(original, updated)

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        training = training_test(self.a, original)
        return updated if training is None else training

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        collected = collection_read(self.a, original, updated)
        if collected is not updated:
            return collected
        if isinstance(original.func, cst.Name) and original.func.value in self.a.layer_objects:
            name = original.func.value
            attr = self.a.layer_object_attrs.get(name)
            if attr is None:
                ctor = self.a.layer_objects[name]
                inner = self.a.canonical(ctor.func) or ""
                cls = LAYER_CLASSES.get(inner) or inner.rsplit(".", 1)[-1]
                args = [a for a in ctor.args if not (a.keyword and a.keyword.value in LAYER_DROP)]
                cls, args = self._tf1_keras_layer(inner, cls, args)
                attr = self.a.layer_object_attrs[name] = self._attr(snake(cls), cls)
                self._add_layer(attr, cls, args, keras=inner.startswith("keras.layers."))
            return updated.with_changes(func=cst.parse_expression(f"self.{attr}"))
        key = self.a.canonical(original.func)
        if key == "nn.dropout":
            return _dropout_rate(updated)
        if functional_layer(key, self.a):
            return self._functional(key, updated)
        if key in CONTRIB_LAYERS:
            return self._contrib(key, updated)
        if isinstance(original.func, cst.Call):
            inner = self.a.canonical(original.func.func)
            cls = LAYER_CLASSES.get(inner or "") or (inner.rsplit(".", 1)[-1] if inner and inner.startswith("keras.layers.") else None)
            if cls is not None:
                self.pending_ctors.discard(id(original.func))
                ctor_call = updated.func
                assert isinstance(ctor_call, cst.Call)
                ctor_args = [a for a in ctor_call.args if not (a.keyword and a.keyword.value in LAYER_DROP)]
                cls, ctor_args = self._tf1_keras_layer(inner or "", cls, ctor_args)
                attr = self._attr(snake(cls), cls)
                self._add_layer(attr, cls, ctor_args, keras=(inner or "").startswith("keras.layers."))
                return updated.with_changes(func=cst.parse_expression(f"self.{attr}"))
        if key in LAYER_CLASSES or (key or "").startswith("keras.layers."):
            self.pending_ctors.add(id(original))  # consumed by the enclosing `Layer(...)(x)` call
            return updated
        if key is not None and (
            key.startswith("layers.")
            or (key.startswith("contrib.layers.") and key not in INITIALIZERS and key not in REGULARIZERS)
        ):
            raise Unsupported(f"`tf.{key}` is not migrated yet")
        return updated

    def _functional(self, key: str, call: cst.Call) -> cst.BaseExpression:
        cls, positional = FUNCTIONAL_LAYERS[key]
        bound = bind_args(call, ("inputs",) + positional)
        if bound is None or "inputs" not in bound:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        inputs = bound.pop("inputs")
        call_args = [cst.Arg(inputs)]
        if "training" in bound:
            call_args.append(cst.Arg(bound.pop("training"), keyword=cst.Name("training"), equal=_eq()))
        elif cls in ("Dropout", "runtime:layers.BatchNormalization"):
            # TF1 `dropout` defaults to training=False: it is a no-op unless told otherwise.
            call_args.append(cst.Arg(cst.Name("False"), keyword=cst.Name("training"), equal=_eq()))
        ctor_args = [
            cst.Arg(value, keyword=cst.Name(name), equal=_eq())
            for name, value in bound.items()
            if name not in LAYER_DROP
        ]
        name_arg = bound.get("name")
        base = snake(cls)
        if isinstance(name_arg, cst.SimpleString) and name_arg.evaluated_value.isidentifier():  # type: ignore[union-attr]
            base = name_arg.evaluated_value  # type: ignore[assignment,union-attr]
        attr = self._attr(base, cls)
        self._add_layer(attr, cls, ctor_args)
        return cst.Call(func=cst.parse_expression(f"self.{attr}"), args=call_args)

    def _contrib(self, key: str, call: cst.Call) -> cst.BaseExpression:
        """`tf.contrib.layers.fully_connected(x, 10, scope='fc')` (and slim's) -> a Keras layer
        built once, its TF1 variable names (`fc/weights`) recorded for the checkpoint loader."""
        cls, positional, renames, defaults, default_scope, weight_names, training = CONTRIB_LAYERS[key]
        bound = bind_args(call, ("inputs",) + positional)
        if bound is None or "inputs" not in bound:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        normalizer = bound.pop("normalizer_fn", None)
        normalizer_params = bound.pop("normalizer_params", None)
        if normalizer is not None and isinstance(normalizer, cst.Name) and normalizer.value == "None":
            normalizer = None
        if normalizer is not None:
            if self.a.canonical(normalizer) != "contrib.layers.batch_norm":
                raise Unsupported(f"`tf.{key}(normalizer_fn={self.a.code(normalizer)})` is not migrated yet")
            return self._normalized(key, bound, normalizer_params)
        if key == "contrib.layers.batch_norm":
            self._check_batch_norm(bound)
        data_format = bound.get("data_format")
        if data_format is not None and not (
            isinstance(data_format, cst.SimpleString) and data_format.evaluated_value in ("NHWC", "NWC", "NDHWC")
        ) and not (isinstance(data_format, cst.Name) and data_format.value == "None"):
            raise Unsupported(f"`tf.{key}(data_format=...)` other than channels-last is not migrated")
        inputs = bound.pop("inputs")
        call_args = [cst.Arg(inputs)]
        if training is not None:
            param, default = training
            value = bound.pop(param, None)
            call_args.append(cst.Arg(value if value is not None else cst.Name(default), keyword=cst.Name("training"), equal=_eq()))
        scope_arg = bound.pop("scope", None)
        if scope_arg is not None and not (isinstance(scope_arg, cst.Name) and scope_arg.value == "None"):
            if not isinstance(scope_arg, cst.SimpleString):
                raise Unsupported(f"`tf.{key}(scope=...)` is not a string literal")
            base = str(scope_arg.evaluated_value)
        else:
            base = default_scope
        attr, tf1 = self.a.tf1_layer_name(base, self.scope)
        self.last_base = tf1[len(self.scope) + 1:] if self.scope else tf1  # the layer's name in its scope
        for keras_name, tf1_name in weight_names.items():
            self.a.tf1_names[f"{attr}/{keras_name}"] = f"{tf1}/{tf1_name}"
        if not weight_names and attr != tf1 and cls not in WEIGHTLESS_LAYERS:
            self.a.tf1_names[attr] = tf1
        ctor: list[cst.Arg] = []
        for name, value in bound.items():
            if name in CONTRIB_DROP:
                continue
            if name == "keep_prob":
                ctor.append(cst.Arg(cst.parse_expression(_one_minus(self.a.code(value))), keyword=cst.Name("rate"), equal=_eq()))
                continue
            if name == "biases_initializer" and isinstance(value, cst.Name) and value.value == "None":
                ctor.append(cst.Arg(cst.Name("False"), keyword=cst.Name("use_bias"), equal=_eq()))
                continue
            if name == "activation_fn" and isinstance(value, cst.Name) and value.value == "None":
                continue
            ctor.append(cst.Arg(value, keyword=cst.Name(renames.get(name, name)), equal=_eq()))
        for name, text in defaults.items():
            if name in bound:
                continue
            if name == "keep_prob":
                ctor.append(cst.Arg(cst.parse_expression(_one_minus(text)), keyword=cst.Name("rate"), equal=_eq()))
            elif text != "None":
                ctor.append(cst.Arg(cst.parse_expression(text.format(tf=self.a.tf)), keyword=cst.Name(renames.get(name, name)), equal=_eq()))
        self._add_layer(attr, cls, ctor)
        return cst.Call(func=cst.parse_expression(f"self.{attr}"), args=call_args)

    def _check_batch_norm(self, bound: dict[str, cst.BaseExpression]) -> None:
        """What of slim's batch_norm has a migration: updates in place (`updates_collections=None`)
        or through UPDATE_OPS; no activation, renorm, batch weights or zero-debiasing."""
        for name in ("activation_fn", "param_initializers", "param_regularizers", "batch_weights", "renorm", "adjustment"):
            value = bound.get(name)
            if value is not None and not (isinstance(value, cst.Name) and value.value in ("None", "False")):
                raise Unsupported(f"`slim.batch_norm({name}=...)` is not migrated yet")
        debias = bound.pop("zero_debias_moving_mean", None)
        if debias is not None and not (isinstance(debias, cst.Name) and debias.value == "False"):
            raise Unsupported("`slim.batch_norm(zero_debias_moving_mean=True)` is not migrated yet")
        for name in ("activation_fn", "param_initializers", "param_regularizers", "batch_weights", "renorm", "adjustment", "renorm_clipping", "renorm_decay"):
            bound.pop(name, None)
        collections = bound.pop("updates_collections", None)
        if collections is not None:
            if isinstance(collections, cst.Name) and collections.value == "None":
                # Updated in place: the moving statistics move whatever the train op depends on.
                bound["update_moving_statistics"] = cst.Name("True")
            elif self.a.canonical(collections) != "GraphKeys.UPDATE_OPS":
                raise Unsupported("`slim.batch_norm(updates_collections=...)` other than None or UPDATE_OPS")

    def _normalized(
        self, key: str, bound: dict[str, cst.BaseExpression], params: cst.BaseExpression | None
    ) -> cst.BaseExpression:
        """`slim.conv2d(x, 64, [3, 3], normalizer_fn=slim.batch_norm, normalizer_params={...})`: the
        layer without its bias or activation, then `<scope>/BatchNorm`, then the activation."""
        activation = bound.pop("activation_fn", None)
        if activation is None:
            activation = cst.parse_expression(CONTRIB_LAYERS[key][3].get("activation_fn", "None").format(tf=self.a.tf))
        bound["activation_fn"] = cst.Name("None")
        bound["biases_initializer"] = cst.Name("None")
        bound.pop("biases_regularizer", None)
        layer_call = self._contrib(key, cst.Call(func=cst.Name("_"), args=[cst.Arg(v, keyword=cst.Name(k)) for k, v in bound.items()]))
        params_dict = self.a.dict_value(params) if params is not None else cst.Dict([])
        if params_dict is None:
            raise Unsupported("`normalizer_params` is not a dict literal")
        norm_bound: dict[str, cst.BaseExpression] = {"inputs": layer_call}
        for element in params_dict.elements:  # type: ignore[attr-defined]
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise Unsupported("`normalizer_params` with non-literal keys")
            norm_bound[str(element.key.evaluated_value)] = element.value
        norm_bound["scope"] = cst.SimpleString(repr(f"{self.last_base}/BatchNorm"))
        normed = self._contrib(
            "contrib.layers.batch_norm",
            cst.Call(func=cst.Name("_"), args=[cst.Arg(v, keyword=cst.Name(k)) for k, v in norm_bound.items()]),
        )
        if isinstance(activation, cst.Name) and activation.value == "None":
            return normed
        return cst.Call(func=activation, args=[cst.Arg(normed)])

    def _tf1_keras_layer(self, inner: str, cls: str, args: list[cst.Arg]) -> tuple[str, list[cst.Arg]]:
        """A model_fn's `tf.keras.layers.BatchNormalization` is the runtime's, its moving statistics
        frozen: Keras 2 built into the Estimator's TF1 graph kept their updates out of UPDATE_OPS
        (in `layer.updates` only), so the train op never ran them, whatever it depended on. That
        holds for a TF 1.x program and for TF 2.x code through `tf.compat.v1` alike: Estimator
        always built a graph (generated seed 513: `import tensorflow.compat.v1 as tf`, a train op
        under `control_dependencies(UPDATE_OPS)`, and TF 2.15's moving statistics never moved)."""
        if inner != "keras.layers.BatchNormalization":
            return cls, args
        frozen = cst.Arg(cst.Name("False"), keyword=cst.Name("update_moving_statistics"), equal=_eq())
        return "runtime:layers.BatchNormalization", [*args, frozen]

    def _add_layer(self, attr: str, cls: str, args: list[cst.Arg], keras: bool = False) -> None:
        """`keras`: a `tf.keras.layers` class in the original, whose regularizers' penalties TF1's
        REGULARIZATION_LOSSES never held (`tf.layers` and `get_variable` put theirs there)."""
        if keras:
            self.a.uncollected_regularizers.append(attr)
        rendered = []
        for arg in args:
            value = arg.value.visit(InitializerRewriter(self.a))
            text = self.a.code(value)
            rendered.append(f"{arg.keyword.value}={text}" if arg.keyword else text)
        if cls.startswith("runtime:"):
            func = f"{self.a.tfm}.{cls[len('runtime:'):]}"
            if (cls.endswith("BatchNormalization") or cls.endswith("SlimBatchNorm")) and not self.a.update_ops_dependency and not any(
                r.startswith("update_moving_statistics=") for r in rendered
            ):
                # No UPDATE_OPS dependency in the TF1 train op: its moving statistics never moved.
                rendered.append("update_moving_statistics=False")
        else:
            func = f"{self.a.tf}.keras.layers.{cls}"
        used = names_in(cst.parse_expression(f"{func}({', '.join(rendered)})"))
        self.layers.append((attr, used, (func, rendered)))


class _Effects(Visitor):
    """Whether an expression may do more than compute a value (a call, an await, a walrus, a yield)."""

    def __init__(self) -> None:
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Call, cst.Await, cst.NamedExpr, cst.Yield, cst.Lambda)):
            self.found = True
        return not self.found


def _call_free_local(line: cst.CSTNode) -> str | None:
    """`name` for a `name = <value without calls>` statement line, else None."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    assign = line.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    effects = _Effects()
    walk(assign.value, effects)
    return None if effects.found else assign.targets[0].target.value


def drop_folded_locals(lines: list, keep: set[str]) -> list:
    """call() without the `name = <value without calls>` lines nothing in it reads any more.

    Every line of call() was needed by the TF1 forward pass; one that is read no longer had its
    uses folded away by the layer rewrite (slim's `normalizer_params=batch_norm_params` dict,
    now the `SlimBatchNorm` layers' arguments). Repeats until no such line is left.
    """
    while True:
        for index, line in enumerate(lines):
            name = _call_free_local(line)
            if name is None or name in keep:
                continue
            if any(name in names_in(other) for other in lines[:index] + lines[index + 1 :]):
                continue
            lines = lines[:index] + lines[index + 1 :]
            break
        else:
            return lines


@functools.cache
def _eq() -> cst.AssignEqual:
    """`=` with no space around it (a keyword argument's)."""
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _dropout_rate(call: cst.Call) -> cst.Call:
    """TF1's `tf.nn.dropout(x, keep_prob=k)` (or `tf.nn.dropout(x, k)`) -> `tf.nn.dropout(x, rate=1 - k)`."""
    args = list(call.args)
    for index, arg in enumerate(args):
        if (arg.keyword is not None and arg.keyword.value == "keep_prob") or (arg.keyword is None and index == 1):
            keep = arg.value
            if isinstance(keep, (cst.BinaryOperation, cst.UnaryOperation, cst.IfExp, cst.BooleanOperation)):
                keep = keep.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            value = cst.BinaryOperation(left=cst.Integer("1"), operator=cst.Subtract(
                whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")), right=keep)
            args[index] = arg.with_changes(keyword=cst.Name("rate"), value=value, equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            return call.with_changes(args=args)
    return call


def _maybe_reshaped(call: cst.Call) -> bool:
    """`tf.constant_initializer(v)` whose `v` is made in place as a list or by a call
    (`[...]`, `np.linspace(...)`): a flat one is TF1's common way to fill a matrix. (A name is kept
    as Keras's `Constant`, as the fixtures spell it; it holds the weight's shape there.)"""
    value = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "value"), None)
    return isinstance(value, (cst.List, cst.Tuple, cst.Call))


class InitializerRewriter(Transformer):
    """`tf.constant_initializer(v)` -> `tf.keras.initializers.Constant(v)` inside layer arguments."""

    def __init__(self, analyzer: Analysis) -> None:
        super().__init__()
        self.a = analyzer

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key == "constant_initializer" and _maybe_reshaped(updated):
            # Keras's Constant fills with a scalar; TF1's took an array of the weight's size too,
            # as TF2's `tf.constant_initializer` does (a callable Keras takes as an initializer).
            return updated.with_changes(func=cst.parse_expression(f"{self.a.tf}.constant_initializer"))
        if key in INITIALIZERS:
            cls, positional, defaults = INITIALIZERS[key]
            bound = bind_args(updated, positional)
            if bound is None:
                raise Unsupported(f"unexpected arguments to `tf.{key}`")
            if key in XAVIER and "uniform" in bound:
                uniform = bound["uniform"]
                if isinstance(uniform, cst.Name) and uniform.value == "True":
                    del bound["uniform"]
                else:
                    cls = "runtime:initializers.xavier_initializer"
            distribution = bound.get("distribution")
            if isinstance(distribution, cst.SimpleString) and distribution.evaluated_value == "normal":
                # TF1's "normal" was a truncated normal.
                bound["distribution"] = cst.SimpleString('"truncated_normal"')
            # Positional arguments stay positional while they line up with Keras's parameters.
            positional_ok = key not in XAVIER
            args = []
            for arg in updated.args:
                name = arg.keyword.value if arg.keyword else positional[len(args)] if positional_ok else ""
                if arg.keyword is None and positional_ok and name not in INITIALIZER_DROP:
                    args.append(self.a.code(bound[name]))
                    continue
                positional_ok = False
                break
            for name, value in list(bound.items())[len(args):]:
                if name not in INITIALIZER_DROP:
                    args.append(f"{name}={self.a.code(value)}")
            args += [f"{k}={v}" for k, v in defaults.items() if k not in bound]
            if cls.startswith("runtime:"):
                return cst.parse_expression(f"{self.a.tfm}.{cls[len('runtime:'):]}({', '.join(args)})")
            return cst.parse_expression(f"{self.a.tf}.keras.initializers.{cls}({', '.join(args)})")
        if key in REGULARIZERS:
            cls, factor = REGULARIZERS[key]
            args = [a for a in updated.args if not (a.keyword and a.keyword.value == "scope")]
            if len(args) != 1:
                raise Unsupported(f"unexpected arguments to `tf.{key}`")
            value = self.a.code(args[0].value)
            value = f"{factor} * {value}" if factor else value
            return cst.parse_expression(f"{self.a.tf}.keras.regularizers.{cls}({value})")
        return updated


class VariableRefs(CollectionReads):
    """Names bound by `tf.get_variable` -> the model attributes holding the weights (and the
    variable-collection reads, as `CollectionReads`)."""

    def __init__(self, analyzer: Analysis) -> None:
        super().__init__(analyzer)
        self.skip: set[int] = set()  # attribute names and keywords are not references

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.skip.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))
        return True

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        attr = self.a.variables.get(original.value)
        if attr is None or id(original) in self.skip:
            return updated
        return cst.Attribute(value=cst.Name("self"), attr=cst.Name(attr))


class ForwardPass:
    """`ModelFnAnalyzer`'s part: the forward pass: layers, variables, deferred weights."""

    def _variable(self, st: "Stmt", call: cst.Call) -> tuple[str, list[str], set[str]]:
        """`w = tf.get_variable('w', shape, initializer=...)` -> (attribute, `add_weight` arguments,
        names the arguments read)."""
        if not isinstance(st.small, cst.Assign) or len(st.defs) != 1 or len(st.small.targets) != 1:
            raise Unsupported("`tf.get_variable` whose result is not assigned to one name")
        bound = bind_args(call, GET_VARIABLE_PARAMS)
        if bound is None or not isinstance(bound.get("name"), cst.SimpleString):
            raise Unsupported("`tf.get_variable` without a string-literal name")
        if "custom_getter" in bound:
            raise Unsupported("`tf.get_variable(custom_getter=...)` is not migrated")
        scope = self.scope_of.get(id(st.node), "")
        leaf = str(bound.pop("name").evaluated_value)  # type: ignore[union-attr]
        tf1 = f"{scope}/{leaf}" if scope else leaf
        attr = self.unique_attr(attr_name(tf1) or "weight")
        if attr != tf1:
            self.tf1_names[attr] = tf1
        args = [f"name={leaf!r}"]
        initializer = bound.pop("initializer", None)
        shape = bound.pop("shape", None)
        if shape is not None:
            args.append(f"shape={self.code(shape)}")
        if initializer is not None and not (isinstance(initializer, cst.Name) and initializer.value == "None"):
            text = self.code(initializer.visit(InitializerRewriter(self)))
            if shape is None:
                # No shape: TF1 took the initial value (and its shape) from `initializer`.
                args.append(f"shape={self.tf}.convert_to_tensor({text}).shape")
                text = f"{self.tf}.keras.initializers.Constant({text})"
            args.append(f"initializer={text}")
        elif shape is None:
            raise Unsupported("`tf.get_variable` with neither a shape nor an initial value")
        for name, value in bound.items():
            if name in GET_VARIABLE_DROP:
                continue
            args.append(f"{name}={self.code(value.visit(InitializerRewriter(self)))}")
        uses = names_in(cst.parse_expression(f"f({', '.join(args)})")) - {"f"}
        self.variables[next(iter(st.defs))] = attr
        return attr, args, uses

    def _defer_shaped_weights(self, stmts: list["Stmt"], weights: list[tuple[str, list[str], set[str]]]) -> list:
        """`hidden_size = output_layer.shape[-1].value` then `tf.get_variable(..., [n, hidden_size])`:
        the weight cannot be made in `build` (no tensor exists yet), so a `tfm.layers.DeferredWeight`
        makes it when first called on the tensor, from a method that reads the tensor's static shape."""
        out = []
        for index, st in enumerate(stmts):
            if st.kind != StmtKind.VARIABLE:
                continue
            entry = next(w for w in weights if w[0] == self.variables.get(next(iter(st.defs))))
            attr, args, uses = entry
            shape_stmts: list[Stmt] = []
            tensors: set[str] = set()
            for earlier in stmts[:index]:
                if not (earlier.defs & uses) or earlier.kind or not isinstance(earlier.small, cst.Assign):
                    continue
                read = _static_shape_reads(earlier.small.value)
                if read and not (names_in(earlier.small.value) - read) & {n for x in stmts[:index] for n in x.defs}:
                    shape_stmts.append(earlier)
                    tensors |= read
            if not shape_stmts:
                continue
            if len(tensors) != 1:
                raise Unsupported("a `tf.get_variable` shape reads the static shapes of several tensors")
            tensor = next(iter(tensors))
            name = next(iter(st.defs))
            del self.variables[name]
            weights.remove(entry)
            leaf = next(a for a in args if a.startswith("name="))[len("name="):].strip("'\"")
            tf1 = self.tf1_names.pop(attr, attr)
            self.tf1_names[f"{attr}/{leaf}"] = tf1
            method = f"_{attr}_arguments"
            strip = _ShapeValue()
            out.append((attr, method, tensor, [self._rewritten(x, strip) for x in shape_stmts], args, uses))
            line = cst.parse_statement(f"{name} = self.{attr}({tensor})")
            st.node = line  # type: ignore[misc]
            st.small = line.body[0]  # type: ignore[attr-defined,misc]
            st.uses = {tensor}
            st.kind = StmtKind.UNCLASSIFIED
        return out

    # -- steps of `analyze()` -----------------------------------------------------------------
    def _forward_plan(self, flow: Flow) -> None:
        """The forward pass -> `call()` (`plan.call_stmts`), its TF1 layers hoisted into Keras
        layers (`plan.layers`), `tf.get_variable`s -> `plan.weights`, deferred weights, and what
        the layers' and weights' arguments need (`init_stmts`, `weight_stmts`)."""
        plan, stmts, forward, label_names = flow.plan, flow.stmts, flow.forward, flow.label_names
        weights, needed_pure = flow.weights, flow.needed_pure
        rewriter = ForwardRewriter(self)
        call_lines: list[cst.SimpleStatementLine] = []
        forward_stmts = [st for st in stmts if st.kind == StmtKind.FORWARD]
        # Forward statements the output does not need and that build no layer (say, probabilities
        # only the PREDICT branch reads) stay out of call(); predict_step recomputes what it needs.
        live: set[str] = {plan.output}
        for st in reversed(forward_stmts):
            if st.defs & live or creates_layer(st.small, self):
                live |= st.uses
            else:
                st.kind = StmtKind.DEAD
        forward_stmts = [st for st in forward_stmts if st.kind == StmtKind.FORWARD]
        scoped_lines = self._scoped(plan, stmts, forward_stmts)
        layer_uses: set[str] = set()
        for st in stmts:
            if st.kind == StmtKind.FORWARD and id(st) in scoped_lines:
                if scoped_lines[id(st)] is not None:
                    call_lines.append(scoped_lines[id(st)])
            elif st.kind == StmtKind.FORWARD:
                rewriter.scope = self.scope_of.get(id(st.node), "")
                call_lines.append(self._rewritten(st, rewriter))
            elif st.kind == StmtKind.PURE and any(st in needed_pure(f.uses) for f in forward_stmts):
                call_lines.append(st.node)
        if rewriter.pending_ctors:
            raise Unsupported("a layer object is created apart from its call; build it once in the model")
        for layer in rewriter.layers:
            layer_uses |= layer[1]
        if rewriter.uses_labels:
            raise Unsupported("the forward pass reads labels")
        bad = layer_uses & (forward | label_names)
        if bad:
            raise Unsupported(f"layer arguments depend on tensors ({', '.join(sorted(bad))}); cannot build the layer once")
        plan.layers = [Layer(attr, func, args) for attr, _, (func, args) in rewriter.layers]
        plan.weights = [(attr, args) for attr, args, _ in weights]
        for attr, method, tensor, shape_lines, args, uses in flow.deferred:
            shape_uses = set().union(*(names_in(line) for line in shape_lines))
            prelude = [x.node for x in needed_pure((uses | shape_uses) - {tensor})]
            plan.deferred_weights.append((attr, method, tensor, prelude + shape_lines, args))
            plan.deferred_use_params = plan.deferred_use_params or self.params in uses | shape_uses | set().union(
                set(), *(names_in(line) for line in prelude)
            )
        weight_uses = set().union(set(), *(uses for _, _, uses in weights))
        bad = weight_uses & (forward | label_names)
        if bad:
            raise Unsupported(f"`tf.get_variable` arguments depend on tensors ({', '.join(sorted(bad))})")
        plan.tf1_names = dict(self.tf1_names)
        init_rewriter = InitializerRewriter(self)
        plan.init_stmts = [self._rewritten(st, init_rewriter) for st in needed_pure(layer_uses)]
        weight_stmts = needed_pure(weight_uses)
        plan.weight_stmts = [self._rewritten(st, init_rewriter) for st in weight_stmts]
        plan.weights_use_params = self.params in weight_uses | set().union(set(), *(st.uses for st in weight_stmts))
        call_lines = drop_folded_locals(call_lines, {plan.output})
        plan.call_stmts = call_lines
        call_names = set().union(set(), *(names_in(node) for node in call_lines))
        plan.call_uses_params = self.params in call_names
        if self.mode and self.mode in call_names:
            raise Unsupported("the forward pass uses `mode` beyond `mode == ModeKeys.TRAIN`")

    def _drop_unread_regularizers(self, flow: Flow) -> None:
        """Regularizers count only if the TF1 loss read them (tf.losses.get_regularization_loss());
        Keras always adds them, so unread ones are dropped to keep TF1's numbers. A `tf.keras.layers`
        layer's never counted: TF1 left its penalties out of REGULARIZATION_LOSSES."""
        plan = flow.plan
        reads_regularization = any(calls_any(st.small, self, REGULARIZATION_LOSS_FNS) for st in flow.loss_stmts)
        plan.scoped_regularization = reads_regularization
        for layer in plan.layers:
            if not reads_regularization or layer.attr in self.uncollected_regularizers:
                layer.args = [a for a in layer.args if not re.match(r"\w*_regularizer=", a)]
        if not reads_regularization:
            plan.weights = [(attr, [a for a in args if not a.startswith("regularizer=")]) for attr, args in plan.weights]


def training_test(analyzer: Analysis, comparison: cst.Comparison) -> cst.BaseExpression | None:
    """`training` for `mode == TRAIN` (`not training` for `!=`); None when `comparison` does not
    test `mode`. A test against another mode has no Keras form in the forward pass."""
    mode = analyzer.is_mode_compare(comparison)
    if mode is None:
        return None
    equal, key = mode
    if key != "estimator.ModeKeys.TRAIN":
        raise Unsupported(f"the forward pass tests `mode` against {key.rsplit('.', 1)[-1]}")
    return cst.Name("training") if equal else cst.UnaryOperation(cst.Not(), cst.Name("training"))
