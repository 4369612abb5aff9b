"""Audit a migrated tree for TF1 references that fail on current TensorFlow and carry no TODO.

Usage::

    tfmigrate --out-dir /tmp/out/tree --report /tmp/out/tree.json /tmp/src/tree
    python scripts/public_tree_audit.py /tmp/src/tree /tmp/out/tree [--report /tmp/out/tree.json]
        [--json FILE] [-v]

``--out-dir`` writes only the files tfmigrate changed, so a file missing there is read from the
source tree. A notebook (``.ipynb``) is read as its code cells laid end to end (``notebook_code``):
its line numbers count through them. Every code token sequence (never strings or comments) that spells a name removed by
TF 2.16+ (``tf.estimator``, ``tf.contrib``, ``tf.*.TPUEstimator``,
``tf.compat.v1.estimator``, ``tf.compat.v1.layers``, ``tf.compat.v1.nn.rnn_cell``,
``tensorflow.contrib``, ``tensorflow_estimator``, ``tensorflow.python.estimator``,
``tf.keras.estimator``) is a *failing reference*; it is *covered* when a ``# TODO(tfmigrate``
comment sits in the statement that holds it or in the comment block right above that statement.
Printed: each uncovered reference (``path:line: name``), the files holding one, the TODOs counted
by rule and message (backticked parts folded) and by the construct they name, and the tier counts
from the report. Standard library only; it never imports TensorFlow.

``--resolve`` also looks up every ``tf.a.b`` / ``tfm.a.b`` attribute chain of the migrated code
(the names bound by ``import tensorflow as ...`` / ``import tfmigrate.runtime as ...``) on the
installed TensorFlow and runtime, attribute by attribute, and lists the chains that do not resolve
with no TODO in or above their statement: what a migration left or wrote that would raise
``AttributeError`` on current TF. That mode imports both: run it with the runtime's interpreter.
"""

from __future__ import annotations

import argparse
import ast
import collections
import io
import json
import re
import sys
import tokenize
from pathlib import Path

FAILING_PREFIXES = (
    "tf.estimator",
    "tf.contrib",
    "tf.compat.v1.estimator",
    "tf.compat.v1.layers",
    "tf.compat.v1.nn.rnn_cell",
    "tf.compat.v1.contrib",
    "tf.keras.estimator",
    "tensorflow.contrib",
    "tensorflow.estimator",
    "tensorflow.compat.v1.estimator",
    "tensorflow.compat.v1.layers",
    "tensorflow.compat.v1.nn.rnn_cell",
    "tensorflow_estimator",
    "tensorflow.python.estimator",
)
TODO_RE = re.compile(r"#\s*TODO\(tfmigrate (\w+)\):\s*(.*)")


def _matches(dotted: str) -> bool:
    for prefix in FAILING_PREFIXES:
        if dotted == prefix or dotted.startswith(prefix + "."):
            return True
    parts = dotted.split(".")
    # A bare `TPUEstimator` comes from an import (flagged there) or is the program's own class.
    return "TPUEstimator" in parts and parts[0] in ("tf", "tensorflow")


def dotted_names(source: str):
    """(line, dotted name) for each maximal NAME(.NAME)* run in code tokens."""
    out = []
    run: list[str] = []
    line = 0
    expect_name = True
    prev_dot_ok = False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type == tokenize.NAME and expect_name:
            if not run:
                line = tok.start[0]
            run.append(tok.string)
            expect_name = False
            prev_dot_ok = True
            continue
        if tok.type == tokenize.OP and tok.string == "." and prev_dot_ok:
            expect_name = True
            prev_dot_ok = False
            continue
        if tok.type in (tokenize.NL, tokenize.COMMENT) and run and expect_name:
            continue  # `tf.\n  contrib` inside brackets
        if run:
            out.append((line, ".".join(run)))
        run = []
        expect_name = True
        prev_dot_ok = False
        if tok.type == tokenize.NAME:
            line = tok.start[0]
            run = [tok.string]
            expect_name = False
            prev_dot_ok = True
    if run:
        out.append((line, ".".join(run)))
    return out


def statement_spans(tree: ast.AST):
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            end = node.end_lineno or node.lineno
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                # A compound statement's own span is its header (decorators included).
                start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                end = body[0].lineno - 1
                spans.append((start, max(start, end)))
                continue
            spans.append((node.lineno, end))
    return spans


def covered(lines: list[str], spans, line: int) -> bool:
    containing = [s for s in spans if s[0] <= line <= s[1]]
    start, end = min(containing, key=lambda s: s[1] - s[0]) if containing else (line, line)
    for i in range(start, end + 1):
        if "TODO(tfmigrate" in lines[i - 1]:
            return True
    i = start - 1
    while i >= 1 and lines[i - 1].lstrip().startswith("#"):
        if "TODO(tfmigrate" in lines[i - 1]:
            return True
        i -= 1
    return False


def audit_file(text: str):
    lines = text.splitlines()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None, []
    spans = statement_spans(tree)
    found = []
    seen = set()
    for line, name in dotted_names(text):
        if _matches(name) and (line, name) not in seen:
            seen.add((line, name))
            found.append((line, name, covered(lines, spans, line)))
    return found, lines


def _tf_roots(tree: ast.AST) -> dict[str, str]:
    """Local name -> module for `import tensorflow [as tf]` / `import tfmigrate.runtime as tfm`."""
    roots = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("tensorflow", "tfmigrate.runtime") and (alias.asname or alias.name == "tensorflow"):
                    roots[alias.asname or alias.name] = alias.name
    return roots


def resolver():
    """`resolves(module, path)`: whether `module.path` exists on the installed TF / runtime."""
    import importlib

    modules: dict = {}
    known: dict = {}

    def resolves(module: str, path: str) -> bool:
        key = (module, path)
        if key not in known:
            obj = modules.setdefault(module, importlib.import_module(module))
            ok = True
            for part in path.split("."):
                try:
                    obj = getattr(obj, part)
                except Exception:  # noqa: BLE001 - a lazy module that fails to load counts as absent
                    ok = False
                    break
            known[key] = ok
        return known[key]

    return resolves


def unresolved_chains(text: str, resolves) -> list[tuple[int, str, bool]]:
    """(line, chain, covered by a TODO) for each tf./tfm. chain that does not resolve."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    roots = _tf_roots(tree)
    if not roots:
        return []
    lines, spans, found, seen = text.splitlines(), statement_spans(tree), [], set()
    for line, name in dotted_names(text):
        root, _, rest = name.partition(".")
        if root in roots and rest and (line, name) not in seen and not resolves(roots[root], rest):
            seen.add((line, name))
            found.append((line, name, covered(lines, spans, line)))
    return found


def notebook_code(text: str) -> str | None:
    """A notebook's code cells as one module, in order (line N of it is line N of the cells laid
    end to end, a blank line between two), IPython's `%magic` and `!shell` lines commented out;
    None for a file that is not a notebook's JSON."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return None
    parts = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        parts.append("\n".join("# " + line if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()))
    return "\n\n".join(parts) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("migrated")
    ap.add_argument("--report", help="tfmigrate --report JSON of the same run")
    ap.add_argument("--json", help="write the counts as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every uncovered reference")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--resolve", action="store_true",
                    help="also list tf./tfm. chains that do not resolve on the installed TF and runtime (imports both)")
    args = ap.parse_args(argv)
    resolves = resolver() if args.resolve else None
    unresolved: dict[str, list] = collections.defaultdict(list)
    src, out = Path(args.source), Path(args.migrated)
    uncovered: dict[str, list] = collections.defaultdict(list)
    uncovered_names: collections.Counter = collections.Counter()
    todo_msgs: collections.Counter = collections.Counter()
    todo_constructs: collections.Counter = collections.Counter()
    unparsable = []
    n_files = 0
    for path in sorted([*src.rglob("*.py"), *src.rglob("*.ipynb")]):
        rel = path.relative_to(src)
        target = out / rel if (out / rel).exists() else path
        text = target.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            text = notebook_code(text)
            if text is None:
                unparsable.append(str(rel))
                continue
        n_files += 1
        found, lines = audit_file(text)
        if found is None:
            unparsable.append(str(rel))
            continue
        for line, name, ok in found:
            if not ok:
                uncovered[str(rel)].append((line, name))
                uncovered_names[".".join(name.split(".")[:3])] += 1
        if resolves is not None:
            unresolved[str(rel)].extend((line, name) for line, name, ok in unresolved_chains(text, resolves) if not ok)
            if not unresolved[str(rel)]:
                del unresolved[str(rel)]
        for ln in lines:
            m = TODO_RE.search(ln)
            if not m:
                continue
            code, msg = m.groups()
            msg = re.sub(r"\s*\(see https?://\S+\)\s*$", "", msg)
            ticks = re.findall(r"`([^`]*)`", msg)
            todo_msgs[f"{code} {re.sub(r'`[^`]*`', '`X`', msg)[:150]}"] += 1
            if ticks:
                todo_constructs[f"{code} {ticks[0]}"] += 1
    total_todos = sum(todo_msgs.values())
    print(f"files: {n_files} ({len(unparsable)} not Python 3: {', '.join(unparsable[:5])})")
    print(f"TODOs: {total_todos}")
    n_unc = sum(len(v) for v in uncovered.values())
    print(f"files with a failing reference and no TODO: {len(uncovered)} ({n_unc} references)")
    for rel, refs in sorted(uncovered.items()):
        shown = refs if args.verbose else refs[:3]
        for line, name in shown:
            print(f"  {rel}:{line}: {name}")
        if len(refs) > len(shown):
            print(f"  {rel}: ... {len(refs) - len(shown)} more")
    if resolves is not None:
        n_unres = sum(len(v) for v in unresolved.values())
        print(f"files with a tf./tfm. chain that does not resolve and no TODO: {len(unresolved)} ({n_unres} chains)")
        for rel, refs in sorted(unresolved.items()):
            for line, name in refs:
                print(f"  {rel}:{line}: {name}")
    if uncovered_names:
        print("uncovered references by name:")
        for name, n in uncovered_names.most_common(args.top):
            print(f"  {n:4d}  {name}")
    print("TODOs by message:")
    for msg, n in todo_msgs.most_common(args.top):
        print(f"  {n:4d}  {msg}")
    print("TODOs by construct:")
    for c, n in todo_constructs.most_common(args.top):
        print(f"  {n:4d}  {c}")
    tiers = None
    if args.report:
        summary = json.loads(Path(args.report).read_text())["summary"]
        tiers = summary.get("estimators")
        print(f"report: {summary.get('todos')} TODOs, estimators {tiers}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "files": n_files, "todos": total_todos, "uncovered_files": len(uncovered),
            "uncovered_refs": n_unc, "uncovered": {k: v for k, v in uncovered.items()},
            "todo_messages": dict(todo_msgs), "todo_constructs": dict(todo_constructs),
            "estimators": tiers,
            **({"unresolved": {k: v for k, v in unresolved.items()}} if resolves is not None else {}),
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
