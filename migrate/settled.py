"""Whether one pass of the rules left a file a fixpoint, without running them again.

The engine repeats the pipeline on its own output until nothing changes (`engine._fixpoint`),
because a rule's output can be another rule's input. The second pass parses and scans the whole
output again: about a sixth of the codemod's time over real code, where it changes nothing. A
pass that stayed on the text path knows everything it wrote, so `PassRecord` keeps that, and
`settled` says the second pass can find nothing when none of these can happen:

- A rule whose trigger symbols (`Rule.TRIGGERS`) the written chains spell acts on them: every
  such rule that did not run after the writer makes the second pass run, even one that ran
  before it (it saw another spelling).
- A rule that may act on any file (no `TRIGGERS`) ran before a rule that wrote TF symbols, so it
  never saw them.
- A name's binding changed so that chains nobody rewrote resolve otherwise: a rewritten import or
  module-level alias, or an added import, rebinding a name to something of another canonical
  path (`import tensorflow.compat.v1 as tf` -> `import tensorflow as tf` does not: both are TF's
  root), or binding a name the original spelled as a variable.
- A rule that rewrote the file through LibCST wrote any of the above: what it wrote is read
  back from the pass's text (`PassRecord.read_cst_writes`: the output's lines the input lacks, as
  the last such rule's, and every binding of the output against the input's).

What it assumes is that each rule leaves nothing for itself to do, which `tests/test_idempotency.py`
holds every rule to; `tests/test_settled.py` checks the verdict against a second pass over every
fixture.
"""

from __future__ import annotations

import ast
import bisect
import re
import textwrap
from dataclasses import dataclass, field

from .names import AliasTable, SourceLines, ast_dotted, canonical_name, import_bindings
from .parsing import parse
from .textpass import SourceView

_CHAIN = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@dataclass
class PassRecord:
    """What one pass of the pipeline wrote, as far as the text path knows it."""

    opaque: bool = False  # a text pass changed bindings in a way the text does not tell
    cst_writers: list[str] = field(default_factory=list)  # the rules that changed the file through LibCST
    # (the rule's code, the texts it spliced in)
    writes: list[tuple[str, list[str]]] = field(default_factory=list)
    # (local name, what it is bound to now: a qualified name, or None when no longer bound)
    rebinds: list[tuple[str, str | None]] = field(default_factory=list)

    def wrote(self, code: str, view: SourceView, replacements: list[tuple[int, int, str]]) -> None:
        """Record a text pass's replacements (byte spans of `view`) and the bindings they change."""
        self.writes.append((code, [text for _, _, text in replacements if text]))
        found = _rebinds(view, replacements)
        if found is None:
            self.opaque = True
        else:
            self.rebinds.extend(found)

    def added_imports(self, items) -> None:
        """The imports the engine adds at the end of the pass (`ImportItem`s)."""
        for item in items:
            module, obj, asname = item.module, item.obj_name, item.alias
            if obj is not None:
                self.rebinds.append((asname or obj, f"{module}.{obj}"))
            elif asname is not None:
                self.rebinds.append((asname, module))
            else:
                root = module.partition(".")[0]
                self.rebinds.append((root, root))

    def read_cst_writes(self, source: str, output: str, names: AliasTable) -> None:
        """What the LibCST rules wrote, read back from the pass's text: every line of `output` that
        `source` lacks, as written by the last of them (the rules that ran before it are taken not
        to have seen any: no intermediate CST is rendered to tell the writers apart); and every
        binding `output` has otherwise than `source` had (`names`), since which statements a CST
        rule rewrote is not recorded."""
        old = set(source.splitlines())
        self.writes.append((self.cst_writers[-1], [line for line in output.splitlines() if line not in old]))
        tree = parse(output)
        table = AliasTable.from_ast(tree, SourceLines(output))
        for local in names.aliases.keys() | table.aliases.keys():
            bound = table.aliases.get(local)
            if bound != names.aliases.get(local):
                self.rebinds.append((local, bound))


def settled(record: PassRecord, source: str, names: AliasTable, candidates: list[type], ran: list[str]) -> bool:
    """Whether a second pass over the pass's output would change nothing. `names`: the pass's
    input's alias table; `candidates`: the rule classes the options select, each a candidate for
    the second pass whatever its `should_run` said in this one; `ran`: the codes of the rules
    that ran in this pass, in order."""
    if record.opaque:
        return False
    aliases = dict(names.aliases)
    for local, bound in record.rebinds:
        if bound is None:
            aliases.pop(local, None)
            continue
        before = names.aliases.get(local)
        if bound != before:
            if before is None:
                if _kind(bound) is not None and local in source and re.search(rf"(?<![\w.]){re.escape(local)}\b", source):
                    return False  # spelled as a name (or in a string) before an import bound it
            elif _kind(before) != _kind(bound):
                return False
        aliases[local] = bound
    gated = [rule for rule in candidates if rule.TRIGGERS is not None]
    open_rules = [rule.CODE for rule in candidates if rule.TRIGGERS is None]
    for code, texts in record.writes:
        symbols = _symbols(texts, aliases)
        if not symbols:
            continue
        if any(rule.triggered(symbols) and not _read_after(rule.CODE, code, ran) for rule in gated):
            return False  # a rule that may act on these symbols saw them spelled otherwise, or not at all
        if any(other not in ran or ran.index(other) < ran.index(code) for other in open_rules if other != code):
            return False  # a rule that may act on any TF symbol never saw these
    return True


def _read_after(reader: str, writer: str, ran: list[str]) -> bool:
    """Whether `reader` ran after `writer` in the pass: its input held what `writer` wrote."""
    return reader in ran and writer in ran and ran.index(reader) > ran.index(writer)


def _kind(qualified: str) -> str | None:
    """What rules read a name bound to `qualified` as: its canonical TF path, the runtime, or
    nothing (None: no rule acts on chains through it)."""
    if qualified in ("tensorflow", "tensorflow.compat.v1"):
        return ""  # TF's root, which a TF 1.x program reads as TF1's either way (`canonical_name`)
    folded = canonical_name(qualified)
    if folded is not None:
        return folded
    return "tfmigrate" if qualified.partition(".")[0] == "tfmigrate" else None


def _symbols(texts: list[str], aliases: dict[str, str]) -> set[str]:
    """Canonical TF symbols (and their prefixes) the dotted chains of `texts` spell."""
    out: set[str] = set()
    for text in set(texts):
        for chain in _CHAIN.findall(text):
            head, _, rest = chain.partition(".")
            full = aliases.get(head)
            if full is None:
                continue
            parts = [full] + (rest.split(".") if rest else [])
            for end in range(1, len(parts) + 1):
                folded = canonical_name(".".join(parts[:end]))
                if folded is not None:
                    out.add(folded)
    return out


def _rebinds(view: SourceView, replacements: list[tuple[int, int, str]]) -> list[tuple[str, str | None]] | None:
    """The bindings of `view`'s imports and module-level aliases that `replacements` change,
    each as (local, new binding or None); None when that cannot be told from the text."""
    if not replacements:
        return []
    spans = sorted(replacements)
    starts = [start for start, _, _ in spans]
    offset = view.lines.offset
    out: list[tuple[str, str | None]] = []
    binders: list[ast.stmt] = [imp for imp, _ in view.imports]
    binders += [
        stmt for stmt in view.tree.body
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    ]
    data = view.lines.data
    for stmt in binders:
        start = offset(stmt.lineno, stmt.col_offset)
        end = offset(stmt.end_lineno, stmt.end_col_offset)  # type: ignore[arg-type]
        lo = bisect.bisect_left(starts, start)
        while lo > 0 and spans[lo - 1][1] > start:
            lo -= 1
        hit = []
        for index in range(lo, len(spans)):
            if spans[index][0] >= end and not (spans[index][0] == end == spans[index][1]):
                break
            if spans[index][1] > start or spans[index][0] >= start:
                hit.append(spans[index])
        if not hit:
            continue
        region_start, region_end = min(start, hit[0][0]), max([end] + [e for _, e, _ in hit])
        pieces, cursor = [], region_start
        for s, e, text in hit:
            pieces.append(data[cursor:s].decode("utf-8"))
            pieces.append(text)
            cursor = e
        pieces.append(data[cursor:region_end].decode("utf-8"))
        new_text = "".join(pieces)
        old = _bound_by(stmt, view.names)
        if old is None:
            return None  # `from m import *`, a relative import: what it binds is not in the text
        try:
            tree = ast.parse(textwrap.dedent(new_text))
        except (SyntaxError, ValueError):
            return None
        new: dict[str, str | None] = {}
        for node in tree.body:
            bound = _bound_by(node, view.names)
            if bound is None:
                return None
            new.update(bound)
        out.extend((local, new.get(local)) for local in old if local not in new)
        out.extend(new.items())
    return out


def _bound_by(stmt: ast.stmt, names: AliasTable) -> dict[str, str | None] | None:
    """What an import or `name = dotted.chain` statement binds (None: some other statement)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return import_bindings(stmt)  # type: ignore[return-value]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        chain = ast_dotted(stmt.value)
        return {stmt.targets[0].id: names.qualify_dotted(chain) if chain else None}
    return None
