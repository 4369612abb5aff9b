"""What `engine.transform_source` returns: `TransformResult`, its `Finding`s and statuses, and the
line tracking that charges each changed line to the rule that changed it (diffed lazily: only
`--check`, `--diff`, reports and `--safe-only` read it)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from .cst_on_demand import cst

from . import tiers
from .registry import all_rules
from .todos import TODO_RE

MIGRATED = "migrated"
UNCHANGED = "unchanged"
TODO = "todo"
ERROR = "error"



@dataclass
class Finding:
    """One report entry. `line`..`end_line` are 1-based; `cell` is set for notebooks (1-based, all cells)."""

    code: str
    line: int
    message: str
    end_line: int | None = None
    cell: int | None = None

    def as_dict(self) -> dict:
        out: dict = {"code": self.code, "line": self.line, "message": self.message}
        if self.end_line is not None:
            out["end_line"] = self.end_line
        if self.cell is not None:
            out["cell"] = self.cell
        return out

    def moved(self, line: int, end_line: int | None = None) -> Finding:
        return Finding(self.code, line, self.message, end_line if self.end_line is not None else None, self.cell)


class Outcome:
    """`changed` and `status` of a migrated text (a module's or a notebook's), read off its
    `source`, `output`, `error` and `todos`."""

    source: str
    output: str
    error: Finding | None
    todos: list

    @property
    def changed(self) -> bool:
        return self.error is None and self.output != self.source

    @property
    def status(self) -> str:
        if self.error is not None:
            return ERROR
        if self.todos:
            return TODO
        return MIGRATED if self.changed else UNCHANGED


@dataclass
class TransformResult(Outcome):
    """What one file's migration did.

    Coordinates: `todos` are lines of `output`; `changes` (the lines each applied rule rewrote) and
    `unsafe_fixes` (what an unsafe rule would rewrite under `safe_only`) are lines of `source`.
    `origin[i]` is the `source` line that `output` line i+1 came from (negated when the line was
    rewritten rather than copied), so either can be mapped to the other (`todos_in_source`,
    `unsafe_fixes_in_output`).
    """

    source: str
    output: str
    rules: list[str] = field(default_factory=list)
    todos: list[Finding] = field(default_factory=list)
    error: Finding | None = None
    # What each rule left behind, from which `changes`, `unsafe_fixes`, `origin` and
    # `import_insertions` are worked out (line diffs) the first time one of them is read.
    track: ChangeTrack | None = field(default=None, repr=False, compare=False)
    # The source's estimator constructions (line, class, already hosted), for `estimators`.
    sites: list[tuple[int, str, bool]] = field(default_factory=list, repr=False, compare=False)
    # The names a rule asked whether another module imports them (`Options.exported`): a run
    # that did not know yet migrates again where one of them is.
    asked: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)
    # A module of Keras code alone (`FileContext.keras_module`): a run migrates it again with TF
    # 1.x's Keras where a module of the program that imports it runs its Keras in a TF1 graph.
    keras_module: bool = field(default=False, repr=False, compare=False)
    # The file was read as TF 1.x code (`FileContext.tf1_program`): the fixpoint's later passes, whose
    # input the first pass respelled, read it so too.
    tf1_program: bool = field(default=False, repr=False, compare=False)
    # Which Keras the migrated file runs (`rules.tf1_keras.keras_code`): (TF1 graph code of its
    # own, Keras 3); its estimators' tiers say the rest.
    keras_code: tuple[bool, bool] = field(default=(False, False), repr=False, compare=False)
    # "library": Session code TFM104 leaves to the program's entry (no main block of its own);
    # "entry": a TF 1.x main module that would take the switch for it (`graph_mode_programs.graph_role`).
    graph_role: str | None = field(default=None, repr=False, compare=False)
    # The output is a fixpoint of the rules by what the pass wrote (`settled`): no second pass.
    settled: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._lines: _Lines | None = None
        self._estimators: list[dict] | None = None
        self.newline = "\n"  # the file's own line end (the track holds its `\n` twin)

    @property
    def estimators(self) -> list[dict]:
        """Each estimator site's tier (`tiers.classify`): source `line`, `estimator`, `tier`."""
        if self._estimators is None:
            if not self.sites or self.error is not None:
                self._estimators = []
            else:
                calls = tiers.output_calls(self.output, tiers.estimator_keys()) if self.changed else self.sites
                self._estimators = tiers.classify(self.sites, calls, self.source_line, self.output)
        return self._estimators

    def _tracked(self) -> _Lines:
        if self._lines is None:
            output = self.output if self.newline == "\n" else self.output.replace(self.newline, "\n")
            self._lines = self.track.lines(output) if self.track is not None else _Lines([], [], None, [])
        return self._lines

    @property
    def changes(self) -> list[Finding]:
        return self._tracked().changes

    @property
    def unsafe_fixes(self) -> list[Finding]:
        if self.track is None or not any(dry_run for *_, dry_run in self.track.steps):
            return []  # only a rule's dry run (`safe_only`) leaves any: no lines to diff
        return self._tracked().unsafe_fixes

    @property
    def origin(self) -> list[int] | None:
        """None: output lines are source lines."""
        return self._tracked().origin

    @property
    def import_insertions(self) -> list[int]:
        """Output lines the import pass inserted (one diff, of the last rule's text and the output,
        where the rules' own line diffs are not worked out yet)."""
        if self._lines is not None or self.track is None:
            return self._tracked().import_insertions
        return self.track.import_insertions(self.output if self.newline == "\n" else self.output.replace(self.newline, "\n"))

    @property
    def todos_in_source(self) -> list[Finding]:
        return [t.moved(self.source_line(t.line)) for t in self.todos]

    @property
    def unsafe_fixes_in_output(self) -> list[Finding]:
        return [f.moved(self.output_line(f.line), self.output_line(f.end_line or f.line)) for f in self.unsafe_fixes]

    def source_line(self, line: int) -> int:
        if self.origin is None or not self.origin:
            return line
        return abs(self.origin[min(max(line, 1), len(self.origin)) - 1])

    def output_line(self, line: int) -> int:
        if self.origin is None:
            return line
        return output_line(self.origin, line, self.output.splitlines())


@dataclass
class _Lines:
    changes: list[Finding]
    unsafe_fixes: list[Finding]
    origin: list[int] | None
    import_insertions: list[int]


@dataclass
class ChangeTrack:
    """The text after each rule that changed something (or the CST, rendered only when asked),
    and who owns the import pass's lines; diffed lazily, since only `--check`, `--diff`, reports
    and `--safe-only` read which rule changed which line."""

    source: str
    steps: list[tuple[str, str, str | cst.Module, bool]] = field(default_factory=list)  # (code, summary, after, dry run)
    add_owners: list[str] = field(default_factory=list)  # rules that scheduled an import to add / to remove if unused
    remove_owners: list[str] = field(default_factory=list)
    last_applied: list[str] = field(default_factory=list)

    def lines(self, output: str) -> _Lines:
        source = self.source
        # `origin` carries every current line back to the source line it came from.
        code, origin = source, list(range(1, _line_count(source) + 1))
        changes: list[Finding] = []
        unsafe: list[Finding] = []
        for rule_code, summary, after, dry_run in self.steps:
            new_code = after if isinstance(after, str) else after.code
            texts: list[tuple[list[str], list[str]]] = []
            hunks, new_origin = _line_diff(code, new_code, origin, texts=texts)
            found = [Finding(rule_code, lo, describe_change(old, new) or summary, hi) for (lo, hi), (old, new) in zip(hunks, texts)]
            if dry_run:
                unsafe.extend(found)
                continue
            code, origin = new_code, new_origin
            changes.extend(found)
        import_insertions: list[int] = []
        if output != code:
            # The import pass: added lines are charged to the rules that asked for an import,
            # removed ones to the rules that asked for an unused import to go (a rule that changed
            # text without saying so would land on the last applied rule).
            kinds: list[str] = []
            texts = []
            hunks, origin = _line_diff(code, output, origin, inserted=import_insertions, kinds=kinds, texts=texts)
            summaries = {r.CODE: r.SUMMARY for r in all_rules()}
            for (lo, hi), kind, (old, new) in zip(hunks, kinds, texts):
                owners = {"insert": self.add_owners, "delete": self.remove_owners}.get(kind, self.add_owners + self.remove_owners)
                for owner in dict.fromkeys(owners or self.last_applied):
                    changes.append(Finding(owner, lo, describe_change(old, new) or summaries[owner], hi))
        changes.sort(key=lambda f: (f.line, f.code))
        unsafe.sort(key=lambda f: (f.line, f.code))
        return _Lines(_merge(changes), _merge(unsafe), origin if output != source else None, import_insertions)

    def import_insertions(self, output: str) -> list[int]:
        """`lines(output).import_insertions` alone: the `output` lines the import pass inserted after
        the last rule that changed the text (a dry run's text is not the next step's input)."""
        code = next((after for *_, after, dry_run in reversed(self.steps) if not dry_run), self.source)
        code = code if isinstance(code, str) else code.code
        inserted: list[int] = []
        if output != code:
            _line_diff(code, output, list(range(1, _line_count(code) + 1)), inserted=inserted)
        return inserted


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _line_diff(
    before: str,
    after: str,
    origin: list[int],
    inserted: list[int] | None = None,
    kinds: list[str] | None = None,
    texts: list[tuple[list[str], list[str]]] | None = None,
) -> tuple[list[tuple[int, int]], list[int]]:
    """Source-line ranges that changed from `before` to `after`, and `after`'s origin map.

    `origin[i]` is the source line of `before` line i+1, negated for a rewritten line. A pure
    insertion is charged to the line it lands before (a TODO comment to its statement). `inserted` collects `after` line numbers of
    pure insertions; `kinds` gets each range's opcode (insert, delete, replace); `texts` each
    range's (old lines, new lines).
    """
    a, b = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ranges: list[tuple[int, int]] = []
    new_origin: list[int] = []
    last = origin[-1] if origin else 1
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            new_origin.extend(origin[i1:i2])
            continue
        if i2 > i1:
            src = [abs(o) for o in origin[i1:i2]]
        else:
            src = [abs(origin[i1]) if i1 < len(origin) else abs(last)]
            if inserted is not None:
                inserted.extend(range(j1 + 1, j2 + 1))
        ranges.append((min(src), max(src)))
        if kinds is not None:
            kinds.append(tag)
        if texts is not None:
            texts.append((a[i1:i2], b[j1:j2]))
        # Line k of the new block is charged to line k of the old one, counting code lines only: a
        # comment (a TODO) belongs to the line it precedes.
        k = 0
        for line in b[j1:j2]:
            new_origin.append(-src[min(k, len(src) - 1)])
            if not line.lstrip().startswith("#"):
                k += 1
    return ranges, new_origin


_WORD = re.compile(r"[\w.]")
_SNIPPET = 60


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."


def describe_change(old: list[str], new: list[str]) -> str | None:
    """What a hunk does, for `--check`: `tf.logging.info -> logging.info` (the differing dotted names
    or expressions of a one-line rewrite), `add `from absl import logging``, `remove `...``, or
    None (a larger rewrite: the caller says what the rule does)."""
    old = [line for line in old if line.strip()]
    new = [line for line in new if line.strip()]
    if not old and new and all(line.lstrip().startswith(("import ", "from ")) for line in new):
        return "add " + "; ".join(f"`{_snippet(line)}`" for line in new)
    if old and not new and all(line.lstrip().startswith(("import ", "from ")) for line in old):
        return "remove " + "; ".join(f"`{_snippet(line)}`" for line in old)
    if len(old) != len(new) or not 1 <= len(old) <= 3:
        return None
    said = [_line_change(a.strip(), b.strip()) for a, b in zip(old, new) if a.strip() != b.strip()]
    return "; ".join(dict.fromkeys(said)) or None


def _line_change(a: str, b: str) -> str:
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    while prefix > 0 and _WORD.match(a[prefix - 1]):  # widen to whole dotted names
        prefix -= 1
    while suffix > 0 and _WORD.match(a[len(a) - suffix]):
        suffix -= 1
    before, after = a[prefix : len(a) - suffix].strip(), b[prefix : len(b) - suffix].strip()
    return f"{_snippet(before) or '(nothing)'} -> {_snippet(after) or '(nothing)'}"


def _merge(found: list[Finding]) -> list[Finding]:
    """One finding per rule and contiguous run of source lines."""
    merged: dict[str, list[Finding]] = {}
    for item in sorted(found, key=lambda f: (f.code, f.line)):
        runs = merged.setdefault(item.code, [])
        end = item.end_line or item.line
        if runs and item.line <= (runs[-1].end_line or runs[-1].line) + 1:
            runs[-1].end_line = max(runs[-1].end_line or runs[-1].line, end)
            parts = runs[-1].message.split("; ")
            if item.message not in parts and item.message not in runs[-1].message:
                runs[-1].message = f"{runs[-1].message}; {item.message}"
        else:
            runs.append(Finding(item.code, item.line, item.message, end))
    return sorted((f for runs in merged.values() for f in runs), key=lambda f: (f.line, f.code))


def output_line(origin: list[int], line: int, text: list[str] | None = None) -> int:
    """The output line holding source `line`: its copy, else the first line (not a comment) rewritten
    from it, else the first line from a later source line."""
    derived = after = None
    for index, src in enumerate(origin, start=1):
        if src == line:
            return index
        comment = text is not None and index <= len(text) and text[index - 1].lstrip().startswith("#")
        if derived is None and -src == line and not comment:
            derived = index
        if after is None and abs(src) > line:
            after = index
    return derived or after or max(len(origin), 1)


def scan_todos(text: str) -> list[Finding]:
    if "TODO(tfmigrate" not in text:
        return []
    found = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "TODO(tfmigrate" in line:
            match = TODO_RE.search(line)
            if match:
                found.append(Finding(match.group(1), lineno, match.group(2).strip()))
    return found
