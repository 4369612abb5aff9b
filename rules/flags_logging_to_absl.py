"""TFM102: tf.flags / tf.app / tf.logging -> absl (flags, app, logging)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from tfmigrate.cst_on_demand import cst

from tfmigrate.names import bindings, canonical_name, dotted_text, in_its_parens
from tfmigrate.parsing import nodes_of_types
from tfmigrate.rule import Rule

if TYPE_CHECKING:
    from tfmigrate.textpass import SourceView, TextPlan

# TF1 module (canonical path prefix) -> the absl module that replaced it.
_MODULES = {"flags.": "flags", "app.flags.": "flags", "logging.": "logging", "app.": "app"}
# tf.logging names absl spells differently.
_LOGGING_RENAMES = {"warn": "warning", "WARN": "WARNING"}
# What absl provides, per module (anything else keeps its spelling and gets a TODO from TFM101).
_ABSL = {
    "flags": None,  # absl.flags has every DEFINE_* and FLAGS that tf.flags re-exported
    "logging": {
        "debug", "info", "warning", "error", "fatal", "log", "vlog", "log_every_n", "log_first_n", "log_if",
        "set_verbosity", "get_verbosity", "flush", "DEBUG", "INFO", "WARNING", "ERROR", "FATAL",
    },
    "app": {"run"},
}


class FlagsLoggingToAbsl(Rule):
    """Spell `tf.flags`, `tf.app.flags`, `tf.app.run` and `tf.logging` as absl, which they wrapped.

    TF2 dropped `tf.flags`, `tf.app` and `tf.logging` (only `tf.compat.v1` keeps them); they were
    thin wrappers over absl-py, which TensorFlow still depends on. `tf.app.run()` without a main
    called the module's `main`, absl's `app.run` needs it passed: `app.run(main)`. TF1's `run`
    parsed only the flags it knew and passed the rest on to `main`, where absl's rejects them: in a
    module that parses its own arguments (`argparse`), `app.run` gets TF1's parser,
    `flags_parser=lambda argv: flags.FLAGS(argv, known_only=True)`. A module that already binds
    `flags`, `app` or `logging` (stdlib `logging`, say) gets `absl_logging` etc.

    Before:

        FLAGS = tf.app.flags.FLAGS
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.app.run()

    After:

        from absl import app, flags, logging
        FLAGS = flags.FLAGS
        logging.set_verbosity(logging.INFO)
        app.run(main)
    """

    CODE = "TFM102"
    DECLINES = (
        ("`tf.app.run()` with no main, in a module with no `main` function to pass",
         "pass absl's `app.run` the main function: `app.run(my_main)`"),
    )
    SUMMARY = "tf.flags / tf.app.flags / tf.app.run / tf.logging -> absl flags, app and logging"
    SAFE = True
    TRIGGERS = frozenset({"flags", "flags.", "app.", "logging", "logging."})

    def should_run(self) -> bool:
        names = self.ctx.names
        # (`from tensorflow import logging` alone: TF1's module, which TF2 has no more)
        return bool(names.tf_roots or names.tf1_roots) or any(
            full.startswith("tensorflow") and (canonical_name(full) or "").split(".")[0] in ("flags", "logging", "app")
            for full in names.aliases.values()
        )

    def visit_Module(self, node: cst.Module) -> bool:
        self._module = node
        self._local: dict[str, str] = {}
        self._retired: set[str] = set()
        bound = self._bound_names(node)
        self._local = _locals(bound)
        self._imported: set[str] = set()
        self._has_main = any(isinstance(s, cst.FunctionDef) and s.name.value == "main" for s in node.body)
        self._own_argv = any(
            isinstance(small, (cst.Import, cst.ImportFrom)) and _imports_argparse(small)
            for stmt in node.body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body
        )
        # `FLAGS = tf.app.flags.FLAGS`, `flags = tf.flags`: the assignment is rewritten, after which
        # the name is absl's; no later rule may treat it as a TensorFlow alias any more.
        aliases = self.ctx.names.aliases
        for stmt in node.body:
            for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    name = small.targets[0].target.value
                    key = canonical_name(aliases.get(name, "")) if aliases.get(name, "").startswith("tensorflow") else None
                    if key is not None and key.split(".")[0] in ("flags", "logging") or (key or "").startswith("app.flags"):
                        self._retired.add(name)
        return True

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        for name in self._retired:
            self.ctx.names.aliases.pop(name, None)
        aliases = self.ctx.names.aliases
        gone = _shadowed(aliases, self._local, self._imported)
        for stmt in updated.body:
            node = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative and not isinstance(node.names, cst.ImportStar):
                module = dotted_text(node.module)
                for alias in node.names:
                    entry = (module, alias.evaluated_name, alias.evaluated_alias)
                    if _renamed(entry, aliases, self._imported, gone):
                        self.ctx.drop_import_if_unused(*entry)
        if gone:
            # `from tensorflow import flags`: absl's `flags` takes the name (an ImportError on TF2).
            body = []
            for stmt in updated.body:
                kept = _without_aliases(stmt, gone)
                if kept is not stmt:
                    self.mark_changed()
                if kept is not None:
                    body.append(kept)
            updated = updated.with_changes(body=body)
            for name in gone:
                self.ctx.names.aliases.pop(name, None)
        return updated

    def _bound_names(self, module: cst.Module) -> dict[str, str]:
        """Names the module binds at top level (imports and assignments) -> what to; and in any
        scope (`_bound_in_scopes`) -> "<local>"."""
        bound: dict[str, str] = dict(self.ctx.names.aliases)
        tree = ast.parse(self.ctx.code_of(module))
        for name in _bound_in_scopes(tree, nodes_of_types(tree)):
            bound.setdefault(name, "<local>")
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name) and target.target.value not in bound:
                                bound[target.target.value] = "<assigned>"
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                bound.setdefault(stmt.name.value, "<defined>")
        return bound

    def _absl(self, key: str) -> str | None:
        """`flags.DEFINE_string` -> `flags.DEFINE_string` (absl's), or None when absl lacks it."""
        found = _absl_symbol(key)
        return None if found is None else f"{self._import(found[0])}.{found[1]}"

    def _module_alias(self, node: cst.BaseExpression) -> str | None:
        """`tf.flags` / `tf.app.flags` / `tf.logging` (the module itself) -> absl's local name."""
        key = self.canonical(node)
        if key in ("flags", "app.flags"):
            module = "flags"
        elif key == "logging":
            module = "logging"
        else:
            return None
        return self._import(module)

    def _import(self, module: str) -> str:
        """Schedules `from absl import <module>` (once); returns its local name."""
        local = self._local[module]
        if module not in self._imported:
            self._imported.add(module)
            asname = None if local == module else local
            self.ctx.codemod.add("absl", module, asname=asname)
        return local

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        # `flags = tf.app.flags`: absl's `flags` is that module now.
        if len(original.targets) == 1 and isinstance(original.targets[0].target, cst.Name):
            local = self._module_alias(original.value)
            if local is not None:
                self.mark_changed()
                return updated.with_changes(value=cst.Name(local))
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        # `flags = flags` after the rewrite above: the line says nothing any more. (One the program
        # wrote itself stays: `x = x` binds a local, or a class attribute, from the global `x`.)
        if len(updated.body) == 1 and _self_assignment(updated.body[0]) and not _self_assignment(original.body[0]):
            return cst.RemovalSentinel.REMOVE
        return updated

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self.canonical(node) is None  # chains are handled whole

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        key = self.canonical(original)
        if key is None or _root(original) in self._retired:
            return updated  # `FLAGS.data_dir` stays: `FLAGS` is absl's once its assignment is rewritten
        text = self._absl(key)
        if text is None:
            return updated
        self.mark_changed()
        return in_its_parens(cst.parse_expression(text), updated)

    def text_edits(self, view: "SourceView") -> "TextPlan | None":
        """The same edits from `ast` alone; None (the CST pass) for a module alias of the TF
        module itself (`flags = tf.app.flags`, a statement to remove)."""
        from tfmigrate.textpass import TextPlan

        aliases = self.ctx.names.aliases
        bound: dict[str, str] = dict(aliases)
        retired: set[str] = set()
        module_aliases: list[tuple[int, str, str]] = []  # (index in body, name, TF module key)
        has_main = False
        for index, stmt in enumerate(view.tree.body):
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and target.id not in bound:
                        bound[target.id] = "<assigned>"
                if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    name = stmt.targets[0].id
                    full = aliases.get(name, "")
                    key = canonical_name(full) if full.startswith("tensorflow") else None
                    if key in ("flags", "app.flags", "logging"):
                        module_aliases.append((index, name, key))  # `flags = tf.app.flags`
                    if key is not None and key.split(".")[0] in ("flags", "logging") or (key or "").startswith("app.flags"):
                        retired.add(name)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.setdefault(stmt.name, "<defined>")
                has_main = has_main or stmt.name == "main"
        own_argv = any(isinstance(stmt, (ast.Import, ast.ImportFrom)) and _imports_argparse(stmt) for stmt in view.tree.body)
        for name in _bound_in_scopes(view.tree, view.nodes_of):
            bound.setdefault(name, "<local>")
        local = _locals(bound)
        plan = TextPlan()
        data = view.lines.data
        imported: set[str] = set()
        body = view.tree.body
        for index, name, key in module_aliases:
            # The CST pass rewrites the value to absl's module, and removes `flags = flags` with
            # the lines LibCST gives the statement (those after the previous simple statement).
            module = "logging" if key == "logging" else "flags"
            stmt, previous = body[index], body[index - 1] if index else None
            simple = (ast.Import, ast.ImportFrom, ast.Assign, ast.Expr, ast.AnnAssign, ast.AugAssign)
            if previous is None or not isinstance(previous, simple) or ";" in view.source.splitlines()[stmt.lineno - 1]:
                return None
            if local[module] != name:
                return None  # `tf_flags = tf.flags` -> `tf_flags = flags`: left to the CST pass
            start = view.lines.starts[previous.end_lineno]  # type: ignore[index]
            last = stmt.end_lineno or stmt.lineno
            end = view.lines.after(last)
            plan.replacements.append((start, end, ""))
            plan.changed = True
            if module not in imported:
                imported.add(module)
                plan.imports.append(("absl", module, None))
        removed = {id(body[index]) for index, _, _ in module_aliases}
        for chain in view.chains:
            if chain.bare or chain.dotted.split(".")[0] in retired or id(chain.stmt) in removed:
                continue
            full = self.ctx.names.qualify_dotted(chain.dotted)
            key = canonical_name(full) if full else None
            if key is None:
                continue
            text = None
            found = _absl_symbol(key)
            if found is not None:
                module, name = found
                text = f"{local[module]}.{name}"
                if module not in imported:
                    imported.add(module)
                    plan.imports.append(("absl", module, None if local[module] == module else local[module]))
            run_call = key == "app.run" and chain.call
            if text is None and not run_call:
                continue
            if chain.in_import or chain.in_fstring:
                return None
            if data[chain.start : chain.end] != chain.dotted.encode("utf-8"):
                return None
            if text is not None:
                plan.replacements.append((chain.start, chain.end, text))
                plan.changed = True
            if run_call and own_argv:
                return None  # `app.run(main, flags_parser=...)`: the CST pass writes the argument
            if run_call and data[chain.end : chain.end + 2] == b"()":
                if has_main:
                    plan.replacements.append((chain.end, chain.end + 2, "(main)"))
                    plan.changed = True
                else:
                    plan.todos.append((chain.stmt, "`tf.app.run()` ran the module's `main`; pass absl's `app.run` the main function"))
        gone = _shadowed(aliases, local, imported)
        for stmt in body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    if _renamed((stmt.module, alias.name, alias.asname), aliases, imported, gone):
                        plan.removals.append((stmt.module, alias.name, alias.asname))
        for stmt in body if gone else ():
            if not isinstance(stmt, ast.ImportFrom) or stmt.level or not (stmt.module or "").startswith("tensorflow"):
                continue
            if not any((alias.asname or alias.name) in gone for alias in stmt.names):
                continue
            span = view.lone_statement_lines(stmt)
            if span is None or not all((alias.asname or alias.name) in gone for alias in stmt.names):
                return None  # its comments, or other names it imports: the CST pass
            plan.replacements.append((*span, ""))
            plan.changed = True
        for name in retired | gone:
            aliases.pop(name, None)
        return plan

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.canonical(original.func) != "app.run":
            return updated
        args = list(updated.args)
        if not args:
            if not self._has_main:
                self.todo("`tf.app.run()` ran the module's `main`; pass absl's `app.run` the main function")
                return updated
            self.mark_changed()
            args = [cst.Arg(cst.Name("main"))]
        if self._own_argv and not any(arg.keyword is not None and arg.keyword.value == "flags_parser" for arg in args):
            self.mark_changed()
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            args.append(cst.Arg(cst.parse_expression(_tf1_flags_parser(self._import("flags"))), keyword=cst.Name("flags_parser"),
                                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        return updated.with_changes(args=args)


def _imports_argparse(node: cst.Import | cst.ImportFrom | ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name == "argparse" for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.module == "argparse"
    if isinstance(node, cst.Import):
        return any(isinstance(alias.name, cst.Name) and alias.name.value == "argparse" for alias in node.names)
    return isinstance(node.module, cst.Name) and node.module.value == "argparse"


def _tf1_flags_parser(flags: str) -> str:
    """TF1 `tf.app.run`'s flag parser: the flags absl knows, the rest left in argv for `main`."""
    return f"lambda argv: {flags}.FLAGS(argv, known_only=True)"


def _shadowed(aliases: dict[str, str], local: dict[str, str], imported: set[str]) -> set[str]:
    """Names an import binds to TF1's flags, logging or app module (`from tensorflow import
    flags`) that the absl module this rule imports takes over: those imports go (TF2 has no such
    module to import)."""
    gone = set()
    for module in imported:
        name = local[module]
        full = aliases.get(name, "")
        if full.startswith("tensorflow") and canonical_name(full) in _TF_MODULES[module]:
            gone.add(name)
    return gone


_TF_MODULES = {"flags": ("flags", "app.flags"), "app": ("app",), "logging": ("logging",)}


def _renamed(entry: tuple[str, str, str | None], aliases: dict[str, str], imported: set[str], gone: set[str]) -> bool:
    """Whether `from module import obj as asname` binds TF1's flags, logging or app module under
    another name than the absl module this rule imports for it (whose uses it respelled): the
    import goes once nothing reads it."""
    module, obj, asname = entry
    name = asname or obj
    full = aliases.get(name, "")
    if name in gone or not module.startswith("tensorflow") or not full.startswith("tensorflow"):
        return False
    key = canonical_name(full)
    return any(key in _TF_MODULES[absl] for absl in imported)


def _without_aliases(stmt: cst.CSTNode, gone: set[str]) -> cst.CSTNode | None:
    """A top-level `from tensorflow... import` line less the aliases binding `gone` (None when
    none is left; `stmt` itself when it binds none)."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.ImportFrom)):
        return stmt
    node = stmt.body[0]
    module = dotted_text(node.module) if node.module is not None else ""
    if node.relative or not module.startswith("tensorflow") or isinstance(node.names, cst.ImportStar):
        return stmt
    kept = [alias for alias in node.names if (alias.evaluated_alias or alias.evaluated_name) not in gone]
    if len(kept) == len(node.names):
        return stmt
    if not kept:
        return None
    if kept[-1] is not node.names[-1]:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return stmt.with_changes(body=[node.with_changes(names=kept)])


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _absl_symbol(key: str) -> tuple[str, str] | None:
    """TF1 path (`logging.warn`) -> (absl module, name there) (`("logging", "warning")`), or None
    when absl has no such name (TFM101 then handles it). What a chain reads off the name comes
    along: `flags.FLAGS.data_dir` -> `("flags", "FLAGS.data_dir")`."""
    for prefix, module in _MODULES.items():
        if key.startswith(prefix):
            name, dot, rest = key[len(prefix):].partition(".")
            name = _LOGGING_RENAMES.get(name, name) if module == "logging" else name
            allowed = _ABSL[module]
            return (module, name + dot + rest) if allowed is None or name in allowed else None
    return None


def _locals(bound: dict[str, str]) -> dict[str, str]:
    """absl module -> the local name it gets (`absl_logging` where the module binds `logging`
    otherwise: stdlib `logging`, a function's parameter or local variable)."""
    tf_modules = {"flags": ("flags", "app.flags"), "app": ("app",), "logging": ("logging",)}
    out = {}
    for absl in ("flags", "app", "logging"):
        taken = bound.get(absl)
        free = taken in (None, f"absl.{absl}") or (
            taken.startswith("tensorflow") and canonical_name(taken) in tf_modules[absl]  # `flags = tf.app.flags`
        )
        name, count = (absl if free else f"absl_{absl}"), 1
        while not free and bound.get(name) not in (None, f"absl.{absl}"):
            count += 1
            name = f"absl_{absl}{count}"
        out[absl] = name
    return out


def _bound_in_scopes(tree: ast.Module, nodes_of: Callable[..., list]) -> set[str]:
    """Names the module binds besides its top-level assignments, defs and imports (which the
    alias table and `bound` hold with what they bind): parameters, names assigned in functions,
    classes and blocks, loop, `with`, `except`, comprehension and `match` targets, nested defs and
    classes (`names.bindings`). A rewrite to `logging.info` inside a function whose local
    `logging` is a string would call the string's method."""
    tops = {id(stmt) for stmt in tree.body}
    tops |= {id(target) for stmt in tree.body if isinstance(stmt, ast.Assign) for target in stmt.targets}
    return {name for name, node in bindings(nodes_of) if id(node) not in tops}


def _self_assignment(statement: cst.BaseSmallStatement) -> bool:
    """`name = name`."""
    return (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0].target, cst.Name)
        and isinstance(statement.value, cst.Name)
        and statement.targets[0].target.value == statement.value.value
    )
