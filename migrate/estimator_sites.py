"""The machinery of the Estimator-family rules (TFM201 Estimator, TFM301 TPUEstimator, TFM401
canned estimators): `EstimatorSiteRule`, the base class their rule modules subclass.

A rule finds `est = <Estimator class>(model_fn=..., ...)` sites, analyses their `model_fn`
(`estimator.analyzer.ModelFnAnalyzer`), replaces the `model_fn` with a Keras model class and builder, the
site with a strategy and the model built in its scope, and `est.train/evaluate/predict` with the
runtime's `fit`/`evaluate`/`predict_examples`; hooks, exporters, receivers and specs go with
them (`estimator_surface`). This module walks the file: it finds the sites and their uses
(`estimator_scan` holds `Site` and the CST helpers) and rewrites the tree; `estimator_codegen`
writes the replacing code. A rule module says which estimator class it handles, how its
arguments map, and overrides the hooks where its class differs from Estimator (TPUEstimator's
strategy, steps per execution and input_fn arguments are in `rules/tpu_estimator_to_keras.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .cst_on_demand import Visitor, cst, statement_types

from . import ctl_codegen, shared_declines
from .estimator_codegen import SiteCodegen
from .estimator_scan import (
    line_in_text,
    once_per_node,
    branching,
    ESTIMATOR_METHODS,
    MODEL_FN_DECLINES,
    SPEC_KEYS,
    Decline,
    DocstringIndent,
    Site,
    StatementIndex,
    assigned_call,
    assigned_call_node,
    blocks_of,
    defs_left_out,
    first_line,
    first_reference,
    fresh_name,
    mentions,
    name_counts,
    nodes_within,
    returned_closure,
)
from .hosted import HOSTED_SITES, kept_model_note, site_note
from .kept_model import KeptModelCodegen
from .runtime_tier import gives_a_runconfig_strategy, graph_mode_reasons, reasons_for
from .estimator_surface import EARLY_STOPPING, RECEIVERS, SURFACE_SYMBOLS, SurfaceRewriter, base_kind, session_only_uses, tensor_arg_problem
from .keras_codegen import render
from .estimator.analyzer import ModelFnAnalyzer
from .estimator.plan import Plan, Unsupported
from .names import ReferenceVisitor, canonical_name, names_in
from .parsing import parse
from .rule import Rule
from .statement_lines import statement_line
from .cst_walk import walk

if TYPE_CHECKING:
    from libcst.metadata import CodeRange

# What may stand between a call's function and its `(`: spaces and line breaks, the function's
# closing parentheses, comments, backslash continuations.
_TO_CALL_PAREN = r"(?!\w)(?:\s|\)|\\\n|#[^\n]*)*\("

# Statements that switch a TF1 program to graph mode (TF 2.x ran it eagerly otherwise).
_GRAPH_MODE_SWITCHES = frozenset({"disable_eager_execution", "disable_v2_behavior"})


class EstimatorSiteRule(KeptModelCodegen, SiteCodegen, Rule):
    """Base of the Estimator-family rules; subclasses set the class attributes below and override
    the hooks of `SiteCodegen` where their estimator class differs from Estimator."""

    ESTIMATOR_KEYS: frozenset[str] = frozenset()
    CTOR_ARGS: tuple[str, ...] = ()
    ESTIMATOR_NAME = "Estimator"
    # Constructor arguments that keep a site as written, and the TODO saying why.
    UNMIGRATED_ARGS: Mapping[str, str] = {}
    TARGETS = frozenset({"keras", "ctl"})
    STRUCTURAL = True
    DECLINES = MODEL_FN_DECLINES

    # Other symbols a subclass acts on without an estimator site (TODOs for them).
    EXTRA_TRIGGERS: frozenset[str] = frozenset()

    # Whether the rule's walks may skip the module-level defs `quiet_defs` marks quiet (a subclass
    # whose CST pass reacts to more than the base class's symbols turns it off).
    SKIPS_QUIET_DEFS = True

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Every site and loose call is a call of one of these: without them nothing changes.
        cls.TRIGGERS = frozenset(cls.ESTIMATOR_KEYS) | cls.EXTRA_TRIGGERS
        # What the walks react to outside a model_fn: estimator calls (sites, loose calls,
        # train_and_evaluate and its specs) and the surface (hooks, exporters, receivers,
        # early stopping); the global step and placeholders only inside hook classes and
        # receiver functions, which spell some of those; the switches to graph mode, dropped
        # from any block.
        cls.WALK_SYMBOLS = (
            cls.TRIGGERS | SURFACE_SYMBOLS | {"estimator.train_and_evaluate"} | _GRAPH_MODE_SWITCHES if cls.SKIPS_QUIET_DEFS else None
        )

    def visit_Module(self, node: cst.Module) -> bool:
        self.module = node
        self._graph_mode: list[str] | None = None  # (`hosted_note`'s, worked out once)
        self._graph_mode_kept: list[str] | None = None  # (`_graph_mode_anywhere`'s)
        self._drops_kept_switches: bool | None = None  # (`_drops_switches_for_kept`'s)
        self._statement_indexes: dict[int, tuple[cst.CSTNode, StatementIndex]] = {}  # (`_statements_of`'s)
        self._spec_assigns: dict[int, tuple[cst.Assign, bool]] = {}  # (`_makes_spec`'s)
        self._scope_names: dict[int, tuple[cst.CSTNode, frozenset[str]]] = {}  # (`_names_taken`'s)
        self._used_elsewhere: dict[str, str | None] = {}  # (`_model_fn_used_elsewhere`'s, by name)
        self.functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        # BERT's `model_fn_builder(...)`: a module-level function that defines the model_fn inside
        # it (a closure over its arguments) and returns it. The nested model_fn is migrated in
        # place, so the builder returns the migrated function, a closure over the same arguments.
        self.builders: dict[str, str] = {}
        for fn in list(self.functions.values()):
            inner = returned_closure(fn)
            if inner is not None and inner.name.value not in self.functions:
                self.builders[fn.name.value] = inner.name.value
                self.functions[inner.name.value] = inner
        # Module-level defs that spell nothing the walks react to (the engine's ast pass says).
        self._skip: set[int] = set()
        quiet = self._quiet_defs(node)
        self.sites: list[Site] = []
        self.site_by_stmt: dict[int, Site] = {}
        self.call_rewrites: dict[int, tuple[Site, str]] = {}
        self.call_nodes: dict[int, cst.Call] = {}  # each call_rewrites key's call (however often a walk finds it)
        self.other_uses: dict[int, str] = {}
        self.plans: dict[str, Plan] = {}
        self.plan_failures: dict[str, Decline] = {}
        self._positions: Mapping[cst.CSTNode, CodeRange] | None = None
        self.spec_calls: dict[int, tuple[Site, str]] = {}
        # (id(site), spec variable) of each spec made before its estimator (see `_find_uses`).
        self.early_specs: set[tuple[int, str]] = set()
        self.early_spec_calls: set[int] = set()  # their constructor calls
        # The module-level statement each estimator call `_find_uses` found sits in (call id -> id).
        self._call_tops: dict[int, int] = {}
        holders: set[int] = set()  # the defs (any depth) holding a loose call
        self._find_sites(node, node.body)
        for site in self.sites:
            self._prepare(site)
        self._host_shared_model_fns()
        for site in self.sites:
            if id(site.stmt) in self.site_by_stmt:
                self.other_uses.update(site.other_uses)
        # Hooks, exporters, receivers and specs are rewritten file-wide by the first rule that
        # migrates an estimator here.
        self.surface: SurfaceRewriter | None = None
        self._hook_classes = 0
        self._receiver_fns = 0
        if self.site_by_stmt and self.ctx.scratch.setdefault("estimator_surface", self.CODE) == self.CODE:
            self.surface = SurfaceRewriter(self.canonical, "tfm", model_dir_of=self._model_dir_of, todo=self.todo)
        # Estimators that are returned or passed on (not assigned and used in one scope): their
        # model_fn is still analysed, so the TODO can say what stands in the way.
        site_calls = {id(s.stmt.body[0].value) for s in self.sites if s.stmt.body}  # type: ignore[attr-defined]
        self.loose_calls: set[int] = set()
        # The functions (by id, nested ones included) that build a ServingInputReceiver.
        self._receiver_ids: set[int] = set()
        rule = self
        functions: list[cst.FunctionDef] = []

        defs: list[int] = []  # the defs (classes and functions) the walk is in, outermost first

        class Calls(Visitor):
            def visit_ClassDef(self, node: cst.ClassDef) -> bool:
                if id(node) in quiet:
                    return False
                defs.append(id(node))
                return True

            def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
                if id(original_node) not in quiet:
                    defs.pop()

            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                if id(node) in quiet:
                    return False
                defs.append(id(node))
                functions.append(node)
                return True

            def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
                if id(original_node) not in quiet:
                    functions.pop()
                    defs.pop()

            def visit_Call(self, call: cst.Call) -> None:
                key = rule.canonical(call.func)
                if functions and key in RECEIVERS and isinstance(call.func, (cst.Attribute, cst.Name)):
                    rule._receiver_ids.update(id(fn) for fn in functions)
                if id(call) in site_calls or key not in rule.ESTIMATOR_KEYS:
                    return
                rule.loose_calls.add(id(call))
                holders.update(defs)
                fn = (rule.bind_constructor(call) or {}).get("model_fn")
                if isinstance(fn, cst.Name) and fn.value in rule.functions:
                    rule._analyze(fn.value)
                    rule.loose_fns.add(fn.value)

        self.loose_fns: set[str] = set()
        if self._may_call_more(len(site_calls)):
            walk(node, Calls())
        # The transform walk skips a quiet def unless the rule itself rewrites or reads it: a
        # model_fn (planned or not), a function absorbed into one, one a loose call passes on;
        # nothing when a site sits at module level (its uses are looked for file-wide).
        if quiet and not any(isinstance(site.scope, cst.Module) for site in self.sites):
            named = set(self.plans) | set(self.plan_failures) | self.loose_fns
            named |= {fn for plan in self.plans.values() for fn in plan.absorbed_functions}
            named |= {outer for outer, inner in self.builders.items() if inner in named}  # model_fn_builder
            self._skip = {key for key, stmt in quiet.items() if stmt.name.value not in named}
        if self._hosted and self.SKIPS_QUIET_DEFS and not self.site_by_stmt:
            # Every site and loose call stays as written, with its note: the walk changes nothing
            # in a def, at any depth, that holds none of them (no model_fn is rewritten, nothing
            # absorbed) and no switch to graph mode it may drop. It goes through the function
            # holding a site (its uses are there), and through a module-level statement holding
            # a call it rewrites (a def calling a kept estimator its module binds,
            # `def predict(): return est.predict(...)`).
            whole = {id(site.scope) for site in self.sites if not isinstance(site.scope, cst.Module)}
            whole |= {top for call, top in self._call_tops.items() if call in self.call_rewrites}
            self._skip |= defs_left_out(node, holders, whole, lambda stmt: self._graph_mode_switch(stmt) is not None)
        return True

    def _may_call_more(self, site_calls: int) -> bool:
        """Whether the module may hold a call the `Calls` walk looks for beyond the sites' own
        constructor calls: a constructor of this rule's estimator class, or a receiver. A call's
        key (`canonical`) ends in the chain's last name, or is what a local name is bound to, and
        its `(` follows; so where the module's text spells those words before a `(` (in strings
        and comments too) once per site call and no more, every such call is a site's, and the
        walk would find nothing."""
        keys = self.ESTIMATOR_KEYS | RECEIVERS
        words = {key.rpartition(".")[2] for key in keys}
        words |= {local for local, full in self.ctx.names.aliases.items() if canonical_name(full) in keys}
        text = self.module_text()
        found = 0
        for word in words:
            found += len(re.findall(rf"(?<!\w){re.escape(word)}{_TO_CALL_PAREN}", text))
            if found > site_calls:
                return True
        return found != site_calls

    @property
    def _hosted(self) -> bool:
        """Whether this rule's sites that are not migrated go to the hosted tier (`tfmigrate.hosted`)."""
        return self.ctx.hosted and bool(self.ESTIMATOR_KEYS & HOSTED_SITES)

    def _quiet_defs(self, node: cst.Module) -> dict[int, cst.FunctionDef | cst.ClassDef]:
        """The module-level defs `quiet_defs` marks quiet, by id (none when it does not match)."""
        hint = self.quiet_defs
        if hint is None:
            return {}
        defs = [s for s in node.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        if [name for name, _ in hint] != [d.name.value for d in defs]:
            return {}
        return {id(d): d for d, (_, is_quiet) in zip(defs, hint) if is_quiet}

    def _analyze(self, name: str) -> None:
        if name in self.plans or name in self.plan_failures:
            return
        analyzer = None
        declined = shared_declines.recall(self.ctx.scratch, self.functions[name], self.module, self.ctx.source)
        if declined is not None:  # (an earlier rule of the pass analysed the same function)
            self.plan_failures[name] = declined
            return
        try:
            parsed = self.ctx.parsed
            text = parsed[1] if parsed is not None and parsed[0] is self.module else None
            analyzer = ModelFnAnalyzer(self.functions[name], self.ctx.names, self.module, self.ctx.tf2_alias, "tfm", text)
            # `feature_column.input_layer`/`linear_model` -> tfm.feature_columns layers, whose
            # columns TFM401 makes the runtime's (both targets).
            analyzer.feature_column_layers = True
            analyzer.tf1_program = self.ctx.tf1_program
            self.plans[name] = analyzer.analyze()
            self.plans[name].closure = name in self.builders.values()
        except Unsupported as exc:
            statement = analyzer.blocking_statement(exc) if analyzer is not None else None
            self.plan_failures[name] = self._decline(str(exc), statement)
            shared_declines.remember(self.ctx.scratch, self.functions[name], self.module, self.plan_failures[name])

    def _decline(self, reason: str, statement: cst.CSTNode | None) -> Decline:
        """`reason`, at `statement` (a statement of this module as parsed) when there is one."""
        if statement is None:
            return Decline(reason)
        code = first_line(self.module.code_for_node(statement))
        return Decline(reason, statement, self._line_of(statement), code) if code else Decline(reason)

    def module_text(self) -> str:
        """This module's code: the text LibCST parsed it from where it is that tree, else rendered
        once (`FileContext.code_of`: rendering a large module takes as long as parsing it)."""
        return self.ctx.code_of(self.module)

    def _line_of(self, node: cst.CSTNode) -> int:
        """`node`'s first line in this module, read off its text (`module_text`: the text LibCST
        parsed it from, or the module rendered once): a statement's from that text's `ast`; else
        from the positions of its top-level statement only; else the whole module's positions,
        worked out once."""
        try:
            text = self.module_text()
            line = statement_line(self.module, parse(text), node)  # (a statement: its `ast` twin's line)
            if line is None:
                line = line_in_text(self.module, text, node)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            line = None
        if line is not None:
            return line
        if self._positions is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            self._positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._positions[node].start.line

    def _failure(self, name: str) -> str:
        """Why model_fn `name` is not migrated, said as the site's note (with the line) or TODO (without)."""
        decline = self.plan_failures[name]
        return decline.with_line() if self._hosted else decline.with_code()

    # -- discovery ------------------------------------------------------------------------
    def _find_sites(self, scope: cst.CSTNode, body, branch: tuple = (None, ())) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if (
                        isinstance(small, cst.Assign)
                        and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and isinstance(small.value, cst.Call)
                        and self.canonical(small.value.func) in self.ESTIMATOR_KEYS
                    ):
                        args = self.bind_constructor(small.value)
                        site = Site(stmt, scope, small.targets[0].target.value, args or {}, branch=branch[0], exclusive=branch[1])
                        if args is None or len(stmt.body) != 1:
                            site.problems.append(
                                f"{self.ESTIMATOR_NAME} is constructed with arguments tfmigrate cannot read: pass them as "
                                "keyword arguments (model_fn=, config=, params=) and run tfmigrate again"
                            )
                        self.sites.append(site)
            elif isinstance(stmt, cst.FunctionDef):
                self._find_sites(stmt, stmt.body.body)  # type: ignore[attr-defined]
            elif isinstance(stmt, cst.BaseCompoundStatement) and not isinstance(stmt, cst.ClassDef):
                blocks = blocks_of(stmt)
                for block in blocks:
                    inner = (block, tuple(b for b in blocks if b is not block)) if isinstance(stmt, branching()) else branch
                    self._find_sites(scope, block.body, inner)

    def bind_constructor(self, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        out: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(call.args):
            if arg.star:
                return None
            name = arg.keyword.value if arg.keyword else (self.CTOR_ARGS[index] if index < len(self.CTOR_ARGS) else None)
            if name is None:
                return None
            out[name] = arg.value
        return out

    def _names_taken(self, site: Site) -> set[str]:
        """The names a site's model may not take: its scope's, the module's functions, and the
        model of an earlier site of the scope still called after this one is built (two
        estimators built before either trains keep two models)."""
        # (a scope's names, once however many sites it builds)
        taken = set(once_per_node(self._scope_names, site.scope, lambda: frozenset(names_in(site.scope)))) | set(self.functions)
        earlier = [other for other in self.sites[: self.sites.index(site)] if other.scope is site.scope]
        if not earlier:
            return taken
        order = self._statements_of(site.scope).order  # (statements and calls, in the text's order)
        here = order.get(id(site.stmt), -1)
        for other in earlier:
            calls = [key for key, (owner, _) in self.call_rewrites.items() if owner is other]
            if any(order.get(key, -1) > here for key in calls):
                taken.update(name for name in (other.model_var, other.params_var, other.config_var) if name)
        return taken

    def _prepare(self, site: Site) -> None:
        self.prepare_model(site)
        taken = self._names_taken(site)
        site.model_var = fresh_name("loop" if self.ctl_target else "model", taken, site.est_name)
        site.strategy_var = fresh_name("strategy", taken, site.est_name)
        if "params" in site.args and not isinstance(site.args["params"], cst.Name):
            site.params_var = fresh_name("params", taken, site.est_name)
        if "config" in site.args and not isinstance(site.args["config"], (cst.Name, cst.Attribute)):
            site.config_var = fresh_name("run_config", taken, site.est_name)
        if site.problems:
            self._keep_as_model(site)
            return
        saved = self._uses_found()
        self._find_uses(site)
        if site.other_uses and self._hosted and self.can_host(site.stmt.body[0].value):  # type: ignore[attr-defined]
            # The hosted estimator is the estimator itself: whatever else the program does with it
            # (returns it, passes it on, reads its model_dir, exports it) keeps working.
            within = nodes_within(site.exclusive)  # (the other branches of its `if`)
            if site.uses_at and all(id(use) in within for use in site.uses_at):
                site.problems.append(
                    f"another branch of its `if` binds `{site.est_name}` too{self._use_where(site.uses_at[0])} and "
                    "the branches use it after they join, where either estimator may be the one called"
                )
                return
            first = next((use for use in site.uses_at if id(use) not in within), None)
            site.problems.append(
                f"`{site.est_name}` is used beyond train/evaluate/predict/export{self._use_where(first)}, which "
                "the hosted estimator keeps as written"
            )
            return
        shared = self._model_fn_used_elsewhere(site.plan) if site.plan is not None else None
        if shared is not None:  # hosted, as if known before its uses were looked for
            self._forget_uses(site, saved)
            site.problems.append(shared)
            self._keep_as_model(site)
            return
        self.site_by_stmt[id(site.stmt)] = site

    def _model_fn_used_elsewhere(self, plan: Plan) -> str | None:
        """Why the Keras rewrite may not replace `plan`'s model_fn (it takes the function's name
        for the model's builder, which other code would then call as a model_fn): something other
        than this rule's estimator sites refers to it (another function calling it, another
        estimator class's site, a table of functions), or another module of the program imports
        it. For a model_fn a builder returns (BERT's `model_fn_builder`), the builder. None when
        only the sites use it."""
        name = plan.fn_name
        if plan.closure:
            name = next((outer for outer, inner in self.builders.items() if inner == plan.fn_name), name)
        if name in self._used_elsewhere:
            return self._used_elsewhere[name]
        skip = {id(self.functions[name])} if name in self.functions else set()
        for site in self.sites:  # (each site's own reference: its `model_fn=`, or the builder's call)
            fn_expr = site.args.get("model_fn")
            if not isinstance(fn_expr, cst.Name):
                continue
            if fn_expr.value == name:
                skip.add(id(fn_expr))
            elif plan.closure:
                call = assigned_call_node(site.scope, fn_expr.value)
                if call is not None and call.func.value == name:  # type: ignore[attr-defined]
                    skip.add(id(call.func))
        why = None
        if name in self.ctx.exported:
            why = f"another module of the program imports `{name}`, which the Keras rewrite would replace"
        else:
            use = first_reference(self.module, name, skip)
            if use is not None:
                why = f"`{name}` is also used{self._use_where(use)} beyond the estimators, and the Keras rewrite would replace it"
        self._used_elsewhere[name] = why
        return why

    def _keep_as_model(self, site: Site) -> None:
        """A site kept as written becomes `tfm.ModelFnModel` in its strategy where it can
        (`kept_model`); its uses are looked for, and forgotten if it cannot."""
        if not (self._hosted and self.KEEPS_MODEL_FN_AS_MODEL) or len(site.stmt.body) != 1:
            return
        saved = self._uses_found()
        self._find_uses(site)
        if self.kept_model_fits(site, self._graph_mode_anywhere()):
            site.kept_model = True
            self.kept_model_names(site)
            return
        self._forget_uses(site, saved)

    def _uses_found(self) -> tuple:
        """What `_find_uses` adds to, as it is now (`_forget_uses` puts it back)."""
        return dict(self.call_rewrites), dict(self.spec_calls), set(self.early_specs), set(self.early_spec_calls)

    def _forget_uses(self, site: Site, saved: tuple) -> None:
        """The uses `_find_uses` found of `site` since `saved` (`_uses_found`), forgotten."""
        self.call_rewrites, self.spec_calls, self.early_specs, self.early_spec_calls = saved
        site.other_uses.clear()
        site.uses_at.clear()

    def _drops_switches_for_kept(self) -> bool:
        """Whether the program's own `disable_v2_behavior()`/`disable_eager_execution()` goes though
        every estimator here is kept as written: its model_fns run in TF2 on the strategy tier,
        which runs what needs TF1 graph mode (hooks, queues) there by itself; not where the module
        runs Session/placeholder code of its own."""
        if self._drops_kept_switches is None:
            from .rules.graph_mode_programs import runs_session_code  # (the rules import this module)

            self._drops_kept_switches = bool(
                self._hosted and self.KEEPS_MODEL_FN_AS_MODEL and (self.sites or self.loose_calls)
                and not runs_session_code(self.module_text(), self.ctx.tf2_alias)
            )
        return self._drops_kept_switches

    def _graph_mode_anywhere(self) -> list[str]:
        """What in this module sends a kept model_fn's calls to graph mode (its switches, unless
        they go: `_drops_switches_for_kept`)."""
        if self._graph_mode_kept is None:
            self._graph_mode_kept = self._module_graph_reasons(switches=not self._drops_switches_for_kept(), session=True)
        return self._graph_mode_kept

    def _module_graph_reasons(self, *, switches: bool, session: bool) -> list[str]:
        """Why this rule's hosted estimators run in graph mode, read off the module
        (`runtime_tier`): with the program's switches counted or not, and (`session`) the
        switch TFM104 adds to Session/placeholder code."""
        reasons = reasons_for(self.ESTIMATOR_NAME, graph_mode_reasons(self.module_text(), switches=switches))
        if session and self.ctx.session_switch:
            from .rules.graph_mode_programs import gets_the_switch  # (the rules import this module)

            if gets_the_switch(self.module_text(), self.ctx.tf2_alias):
                reasons.append("its Session/placeholder code keeps TF1 graph mode (TFM104 adds `disable_v2_behavior()`)")
        return reasons

    def _use_where(self, use: cst.CSTNode | None) -> str:
        """` (line N: `return estimator`)`: where a statement uses the estimator otherwise."""
        code = first_line(self.module.code_for_node(use)) if use is not None else ""
        return f" (line {self._line_of(use)}: `{code}`)" if code else ""

    def _host_shared_model_fns(self) -> None:
        """A site whose model_fn a hosted site also uses goes to the hosted tier too (the Keras
        rewrite replaces the model_fn, which the hosted estimator runs as written)."""
        if not self._hosted:
            return
        changed = True
        while changed:
            changed = False
            hosted_plans = {id(s.plan) for s in self.sites if s.problems and s.plan is not None}
            for site in self.sites:
                if id(site.stmt) in self.site_by_stmt and site.plan is not None and id(site.plan) in hosted_plans:
                    if not self.can_host(site.stmt.body[0].value):  # type: ignore[attr-defined]
                        continue
                    del self.site_by_stmt[id(site.stmt)]
                    site.problems.append(
                        f"its model_fn `{site.plan.fn_name}` is also used by an estimator kept on the hosted tier"
                    )
                    if self.kept_model_fits(site, self._graph_mode_anywhere()):
                        site.kept_model = True
                        self.kept_model_names(site)
                    changed = True

    # -- hooks for estimator classes without a model_fn (TFM401's canned estimators) ------------
    def prepare_model(self, site: Site) -> None:
        """Sets `site.plan` from the site's `model_fn`, or records in `site.problems` why not."""
        fn_expr = site.args.get("model_fn")
        name = self._model_fn_name(site, fn_expr)
        if name is None:
            site.problems.append(
                "model_fn is not a function defined at module level in this file: define it at module level here "
                "and run tfmigrate again, or migrate it by hand"
            )
        else:
            self._analyze(name)
            if name in self.plan_failures:
                site.problems.append(f"`{name}` cannot be migrated automatically yet: {self._failure(name)}")
            else:
                site.plan = self.plans[name]
                self._regularized_replicas(site)
        for arg, message in self.UNMIGRATED_ARGS.items():
            if arg in site.args:
                site.problems.append(message)

    def _regularized_replicas(self, site: Site) -> None:
        """Regularization under `RunConfig(train_distribute=...)` stays as written: TF 2.15's
        graph-mode replicas did not count a layer's penalty as Keras counts it across replicas
        (generated seed 568: a MirroredStrategy regression whose `get_total_loss()` held layer
        regularizers trained 1e-3 apart; without the regularizers, or without the strategy, the
        rewrite is exact). The hosted estimator runs those replicas as TF 2.15 did."""
        code = self.module_text()
        if "regulariz" in code and "train_distribute" in code and gives_a_runconfig_strategy(code):
            site.problems.append(
                "its layers' regularization under `RunConfig(train_distribute=...)`: TF 1.x's replicas counted "
                "those penalties in a way the Keras rewrite does not reproduce yet"
            )

    def _model_fn_name(self, site: Site, fn_expr: cst.BaseExpression | None) -> str | None:
        """The model_fn a site uses: a module-level function, or the closure a builder returns
        (`model_fn = model_fn_builder(...)` in the site's scope, or the builder's call in place)."""
        if isinstance(fn_expr, cst.Call) and isinstance(fn_expr.func, cst.Name) and fn_expr.func.value in self.builders:
            return None  # called in place: the migrated call site needs a name for it
        if not isinstance(fn_expr, cst.Name):
            return None
        builder = assigned_call(site.scope, fn_expr.value)
        if builder is not None:
            return self.builders.get(builder)
        if fn_expr.value in self.functions and fn_expr.value not in self.builders.values():
            return fn_expr.value
        return None

    def _find_uses(self, site: Site) -> None:
        rule = self

        class Uses(ReferenceVisitor):
            def __init__(self) -> None:
                self.stmt: list[cst.CSTNode] = []
                self.site_seen = False  # (the walk is in source order: specs made before it are early)

            def on_visit(self, node: cst.CSTNode) -> bool:
                if id(node) in elsewhere:
                    return False
                if isinstance(node, statement_types()):
                    self.stmt.append(node)  # (popped by on_leave, which LibCST calls for a skipped node too)
                    if index.lacks(node, site.est_name) and not rule._makes_spec(index.assigned_calls.get(id(node), ())):
                        return False  # (nothing here for this estimator: no use, no spec made)
                return super().on_visit(node)

            def on_leave(self, node: cst.CSTNode) -> None:
                if isinstance(node, statement_types()):
                    self.stmt.pop()
                super().on_leave(node)

            def visit_Call(self, node: cst.Call) -> bool:
                func = node.func
                if (
                    isinstance(func, cst.Attribute)
                    and isinstance(func.value, cst.Name)
                    and func.value.value == site.est_name
                    and func.attr.value in ESTIMATOR_METHODS
                ):
                    rule.call_rewrites[id(node)] = (site, func.attr.value)
                    rule.call_nodes[id(node)] = node
                    if self.stmt:
                        rule._call_tops[id(node)] = id(self.stmt[0])
                    for arg in node.args:
                        walk(arg.value, self)
                    return False
                key = rule.canonical(func) if isinstance(func, (cst.Attribute, cst.Name)) else None
                if key in EARLY_STOPPING and node.args and isinstance(node.args[0].value, cst.Name):
                    # The estimator stands for its model directory there (SurfaceRewriter).
                    for arg in node.args[1:]:
                        walk(arg.value, self)
                    return False
                if key == "estimator.train_and_evaluate" and node.args and not node.args[0].star:
                    first = node.args[0].value
                    if isinstance(first, cst.Name) and first.value == site.est_name:
                        rule.call_rewrites[id(node)] = (site, "train_and_evaluate")
                        rule.call_nodes[id(node)] = node
                        for index, arg in enumerate(node.args[1:3], start=1):
                            kind = ("train_spec", "eval_spec")[index - 1]
                            if arg.keyword is not None:
                                kind = arg.keyword.value
                            spec = arg.value
                            early = isinstance(spec, cst.Name) and spec.value in early_specs
                            if isinstance(spec, cst.Name):
                                spec = spec_assigns.get(spec.value)  # type: ignore[assignment]
                            if isinstance(spec, cst.Call) and rule.canonical(spec.func) == SPEC_KEYS.get(kind):
                                rule.spec_calls[id(spec)] = (site, kind)
                                if early:
                                    rule.early_specs.add((id(site), arg.value.value))  # type: ignore[attr-defined]
                                    rule.early_spec_calls.add(id(spec))
                        for arg in node.args[1:]:
                            walk(arg.value, self)
                        return False
                return True

            def visit_Assign(self, node: cst.Assign) -> bool:
                if node.value is site_value:
                    self.site_seen = True
                    for target in node.targets:
                        walk(target.target, self)
                    return False
                value = node.value
                if (
                    isinstance(value, cst.Call)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0].target, cst.Name)
                    and rule._makes_spec([node])
                ):
                    name = node.targets[0].target.value
                    spec_assigns[name] = value
                    if self.site_seen:
                        early_specs.discard(name)
                    else:
                        early_specs.add(name)
                return True

            def visit_Name(self, node: cst.Name) -> None:
                if node.value == site.est_name and self.stmt and self.stmt[-1] is not site.stmt:
                    if id(self.stmt[-1]) not in site.other_uses:
                        site.uses_at.append(self.stmt[-1])
                    site.other_uses[id(self.stmt[-1])] = (
                        f"`{site.est_name}` is used here beyond train/evaluate: the estimator is now the Keras "
                        f"model `{site.model_var}`; migrate this use by hand"
                    )

        site_value = site.stmt.body[0].value  # type: ignore[attr-defined]
        spec_assigns: dict[str, cst.Call] = {}
        # Specs made before the estimator: their input_fn is wrapped where train_and_evaluate runs
        # (the params and config the wrapping reads may be bound between the two).
        early_specs: set[str] = set()
        # `if use_tpu: est = TPUEstimator(...); est.train(...)` / `else: est = Estimator(...); ...`:
        # the other branches never run with this one, so what they bind to the name is another
        # estimator, unless the name is also used after the branches join (then either may reach it).
        elsewhere: set[int] = set()
        index = self._statements_of(site.scope)
        if site.branch is not None:
            others = {id(block) for block in site.exclusive}
            if not mentions(site.scope, site.est_name, others | {id(site.branch)}, index):
                elsewhere = others
        walk(site.scope, Uses())

    def _makes_spec(self, assigns: Iterable[cst.Assign]) -> bool:
        """Whether one of these `name = f(...)` makes a TrainSpec or EvalSpec (each asked once)."""
        return any(
            once_per_node(self._spec_assigns, assign, lambda assign=assign: self.canonical(assign.value.func) in SPEC_KEYS.values())  # type: ignore[attr-defined]
            for assign in assigns
        )

    def _statements_of(self, scope: cst.CSTNode) -> StatementIndex:
        """`scope`'s `StatementIndex`, made once however many estimators it builds."""
        return once_per_node(self._statement_indexes, scope, lambda: StatementIndex.of(scope))

    # -- rewriting ------------------------------------------------------------------------
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if self.surface is not None and id(original) in self._receiver_ids:
            self._receiver_fns -= 1
        if original.name.value in self._absorbed():
            # A module-level metric_fn now inlined into the model's compute_metrics, used nowhere else.
            self.mark_changed()
            return cst.RemovalSentinel.REMOVE
        plan = self.plans.get(original.name.value)
        if plan is None or not any(s.plan is plan and id(s.stmt) in self.site_by_stmt for s in self.sites):
            return updated
        self.mark_changed()
        tfm = self.ctx.need_runtime()
        tf = self.ctx.need_tf2()
        if self.ctl_target and self.ctx.standalone:
            self.ctx.codemod.add("os")  # the loop's checkpoint directories
        if self.ctl_target:
            new = ctl_codegen.render(plan, tf=tf, tfm=tfm, indent=self.module.default_indent, standalone=self.ctx.standalone)
        else:
            new = render(plan, tf=tf, tfm=tfm, indent=self.module.default_indent)
        for note in dict.fromkeys(plan.notes):
            self.todo(note, at=original)
        if plan.hooks:
            self.standalone_lacks(f"`{original.name.value}`'s {', '.join(f'`{h}`' for h in plan.hooks)}", at=original)
        if plan.closure:  # rendered for the module level, placed one level in
            new = [stmt.visit(DocstringIndent(self.module.default_indent)) for stmt in new]
        first = new[0].with_changes(leading_lines=original.leading_lines)
        return cst.FlattenSentinel([first, *new[1:]])

    def _absorbed(self) -> set[str]:
        if not hasattr(self, "_absorbed_cache"):
            migrated = [s.plan for s in self.sites if s.plan is not None and id(s.stmt) in self.site_by_stmt]
            candidates = {name for plan in migrated for name in plan.absorbed_functions}
            # A function goes with the model_fns that absorbed it when nothing else refers to it:
            # every use is inside a migrated model_fn or inside another function that goes too
            # (BERT's `create_model` calling its encoder helper).
            migrated_fns = {plan.fn_name for plan in migrated}
            defs = {**self.functions, **{s.name.value: s for s in self.module.body if isinstance(s, cst.ClassDef)}}
            counts = name_counts(self.module) if candidates else {}
            inside = {name: name_counts(defs[name]) for name in migrated_fns | candidates if name in defs}
            absorbed = {name for name in candidates if name in defs}
            changed = True
            while changed:
                changed = False
                for name in sorted(absorbed):
                    known = sum(inside[fn].get(name, 0) for fn in (migrated_fns | absorbed) - {name} if fn in inside)
                    known += inside[name].get(name, 1) - 1 if name in inside else 0  # `super(Name, self)` inside it
                    if counts.get(name, 0) - known != 1:  # the def itself
                        absorbed.discard(name)
                        changed = True
            self._absorbed_cache = absorbed
        return self._absorbed_cache

    # -- TF1 graph mode switched on by the program -------------------------------------------
    def _graph_mode_switch(self, stmt: cst.CSTNode) -> str | None:
        """`tf.compat.v1.disable_eager_execution()` / `disable_v2_behavior()` as a statement: the
        call's TF1 spelling, else None."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        expr = stmt.body[0]
        if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call) or expr.value.args:
            return None
        key = self.canonical(expr.value.func)
        return f"tf.compat.v1.{key}()" if key in _GRAPH_MODE_SWITCHES else None

    def _drop_graph_mode_switches(self, body: list) -> list | None:
        """`body` without the program's switches to TF1 graph mode (None when it has none, or when
        no estimator here is migrated): the migrated program runs eagerly (Keras 3 and the
        runtime's tf.distribute loops have no graph mode), as TF 1.x programs ran graphs without
        asking. The next statement says what was removed."""
        if not any(self._graph_mode_switch(stmt) for stmt in body):
            return None
        rewritten = any(not s.problems for s in self.sites)
        if not rewritten and not self._drops_switches_for_kept():
            return None
        why = (
            "the migrated program runs eagerly (Keras 3 and tf.distribute; TF1's graph mode is gone)" if rewritten else
            "the kept model_fn runs in TF2 inside the strategy's tf.function, and the runtime runs what needs TF1 "
            "graph mode by itself (put it back if another module of the program runs Session code)"
        )
        out: list = []
        notes: list[cst.EmptyLine] = []
        for stmt in body:
            switch = self._graph_mode_switch(stmt)
            if switch is not None:
                notes.extend(stmt.leading_lines)
                notes.append(cst.EmptyLine(comment=cst.Comment(f"# tfmigrate: removed `{switch}`: {why}")))
                continue
            if notes:
                stmt = stmt.with_changes(leading_lines=[*notes, *stmt.leading_lines])
                notes = []
            out.append(stmt)
        if notes:
            out.append(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=notes))
        self.mark_changed()
        return out

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = self._drop_graph_mode_switches(list(updated.body))
        return updated if body is None else updated.with_changes(body=body)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = self._drop_graph_mode_switches(list(updated.body))
        return updated if body is None else updated.with_changes(body=body)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if id(original) in self.other_uses:
            self.todo(self.other_uses[id(original)], at=original)
        site = next((s for s in self.sites if s.stmt is original), None)
        if site is None:
            return updated
        if site.problems:
            if site.kept_model:
                self.mark_changed()
                self.note(kept_model_note(self.ESTIMATOR_NAME, "; ".join(site.problems)), at=original)
                return cst.FlattenSentinel(self.kept_model_statements(site, original))
            if self._hosted and self.can_host(site.stmt.body[0].value):  # type: ignore[attr-defined]
                self.mark_changed()
                self.note(self.hosted_note("; ".join(site.problems)), at=original)
                return updated
            for problem in site.problems:
                self.todo(problem, at=original)
            return updated
        self.mark_changed()
        return cst.FlattenSentinel(self.site_statements(site, original))

    # -- the surface: hooks, exporters, receivers, specs ------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if id(node) in self._skip:
            return False
        if self.surface is not None and base_kind(self.canonical, node) is not None:
            self._hook_classes += 1
            uses = session_only_uses(node)
            if uses:
                self.todo(
                    f"this TF1 hook uses the graph or session ({', '.join(f'`{u}`' for u in uses)}), which TF2 runs do not have: "
                    "fetch runtime handles (tfm.hooks.LOSS, tfm.hooks.GLOBAL_STEP, metric names) instead"
                )
        return True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if id(node) in self._skip:
            return False
        if self.surface is not None and id(node) in self._receiver_ids:
            self._receiver_fns += 1
        self._mark_declined_model_fn(node)
        return True

    def _mark_declined_model_fn(self, fn: cst.FunctionDef) -> None:
        """A model_fn a site uses that the analysis declined, not hosted: a TODO above the statement
        that declined (above the `def` when that is unknown), marked before the body is walked."""
        name = fn.name.value
        decline = self.plan_failures.get(name)
        if decline is None or self.functions.get(name) is not fn or self._hosted:
            return
        referenced = name in self.loose_fns or any(
            isinstance(s.args.get("model_fn"), cst.Name) and s.args["model_fn"].value == name  # type: ignore[union-attr]
            for s in self.sites
        )
        if referenced:
            self.todo(
                f"`{name}` cannot be migrated automatically yet: {decline.reason}: rewrite that construct (the docs "
                f"entry lists what each case needs) and run tfmigrate again, or migrate `{name}` by hand",
                at=decline.statement or fn,
            )

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        if self.surface is not None and base_kind(self.canonical, original) is not None:
            self._hook_classes -= 1
        if original.name.value in self._absorbed():
            # A hand-written TF1 optimizer class (BERT's AdamWeightDecayOptimizer) that the
            # runtime's Keras form replaced, used nowhere else.
            self.mark_changed()
            return cst.RemovalSentinel.REMOVE
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if self.surface is None:
            return updated
        target = self.surface.runtime_spelling(original)
        if target is None:
            return updated
        self.mark_changed()
        self.ctx.need_runtime()
        return cst.parse_expression(target)

    def _model_dir_of(self, name: str) -> str | None:
        site = next((s for s in self.sites if s.est_name == name and id(s.stmt) in self.site_by_stmt), None)
        if site is None:
            return None
        if "model_dir" in site.args:
            return self.code_of(site.args["model_dir"])
        config = self.config_code(site)
        return f"{config}.model_dir" if config != "None" else None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self.surface is not None:
            new = self.surface.call(
                original, updated, global_step=self._hook_classes > 0, placeholders=self._receiver_fns > 0
            )
            if new is not updated:
                self.mark_changed()
                self.ctx.need_runtime()
                if not isinstance(new, cst.Call):
                    return new
                updated = new
            key = self.canonical(original.func) if isinstance(original.func, (cst.Attribute, cst.Name)) else None
            problem = tensor_arg_problem(self.canonical, original)
            if problem is not None:
                self.todo(problem)
            spec = self.spec_calls.get(id(original))
            if spec is not None:
                text = self.spec_text(spec[0], spec[1], updated, original)
                return updated if text is None else cst.parse_expression(text)
            if key in SPEC_KEYS.values():
                self.todo(
                    f"this `tf.{key}` is not passed to `train_and_evaluate` with a migrated estimator in the same "
                    "function: its `input_fn` must become `tfm.input_fn_data(...)` by hand"
                )
        if self._hosted and id(original) in self._problem_site_calls():
            return self.hosted_constructor(original, updated) or updated
        if id(original) in self.loose_calls:
            hosted = self.hosted_constructor(original, updated) if self._hosted and self._stmt_stack else None
            if hosted is not None:
                self.mark_changed()
                self.note(self.hosted_note(self._loose_reason(original)), at=self._stmt_stack[-1])
                return hosted
            self.todo(
                f"this {self.ESTIMATOR_NAME} is returned or passed on; tfmigrate migrates an estimator assigned to a "
                "variable whose train/evaluate calls are in the same function: restructure, or migrate by hand"
            )
            return updated
        entry = self.call_rewrites.get(id(original))
        if entry is None:
            return updated
        site, method = entry
        if site.kept_model:
            text = self.kept_model_call_text(site, method, updated)
            return updated if text is None else cst.parse_expression(text)
        if id(site.stmt) not in self.site_by_stmt:
            return updated
        text = self.call_text(site, method, updated)
        if text is None:
            return updated
        return cst.parse_expression(text)

    def _problem_site_calls(self) -> set[int]:
        """The constructor calls of the sites kept as written (their problems say why)."""
        return {id(s.stmt.body[0].value) for s in self.sites if s.problems and s.stmt.body}  # type: ignore[attr-defined]

    def hosted_note(self, reason: str) -> str:
        if self._graph_mode is None:
            # (the switches to graph mode are dropped where an estimator here is migrated to Keras)
            kept = all(s.problems for s in self.sites)
            self._graph_mode = self._module_graph_reasons(switches=kept and not self._drops_switches_for_kept(), session=kept)
        return site_note(self.ESTIMATOR_NAME, reason, self._graph_mode)

    def can_host(self, call: cst.Call) -> bool:
        """Whether the hosted tier has this estimator class (every Estimator/TPUEstimator does)."""
        return True

    def hosted_constructor(self, original: cst.Call, updated: cst.Call) -> cst.Call | None:
        """A kept estimator constructor as the hosted tier spells it (None: it cannot be hosted).
        Estimator/TPUEstimator stay as they are: TFM101 respells their symbols file-wide."""
        return updated

    def _loose_reason(self, call: cst.Call) -> str:
        """Why a returned or passed-on estimator is hosted (its model_fn's failure too, if any)."""
        reason = (
            "it is returned, passed on or built where tfmigrate does not follow it (it migrates an estimator "
            "assigned to a variable whose train/evaluate calls are in the same function)"
        )
        fn = (self.bind_constructor(call) or {}).get("model_fn")
        if isinstance(fn, cst.Name) and fn.value in self.plan_failures:
            reason += f"; `{fn.value}`: {self._failure(fn.value)}"
        return reason
