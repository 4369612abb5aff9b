"""Jupyter notebooks: the code cells of an `.ipynb` migrate as one module, then go back to their cells.

- Only code cells change; markdown/raw cells, outputs, metadata, cell ids and the cell count are
  kept. A written notebook keeps the original's JSON indent and final newline (`ensure_ascii=False`).
- IPython syntax is masked before parsing and restored after: line magics (`%time x`), shell
  escapes (`!pip ...`, `files = !ls`), help (`tf.estimator?`), and the first line of a cell magic
  whose body is Python (`%%time`). A cell under any other cell magic (`%%bash`, `%%writefile`) is
  not Python and is left alone.
- The cells are joined with a marker statement between them (`__tfmigrate_cell_3__`), so a rule
  sees the whole notebook (the `tf` imported in cell 1 is the `tf` of cell 5); the output is split
  at the markers. Imports a rule adds are moved into the cell that imports TensorFlow.
- A cell that does not parse is left untouched with a W001 warning; the others migrate.
- Findings are cell-addressed: `cell` is the 1-based index among all cells (markdown included).
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
from dataclasses import dataclass, field
from json.encoder import encode_basestring

from .engine import Options, transform_source
from .results import Finding, Outcome, scan_todos

# Cell magics whose body is Python: the `%%` line is masked and the body migrates.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "tensorflow_version"})

_LINE_MAGIC = re.compile(r"^\s*(?:[%!]|[\w.\[\], ]+=\s*[%!])")
_HELP = re.compile(r"^\s*(?:\?{1,2}[\w.\[\]()'\"]+|[\w.\[\]()'\"]+\?{1,2})\s*$")


@dataclass
class _Cell:
    number: int  # 1-based among all cells
    cell: dict
    original: str
    masked: str = ""
    magics: dict[str, str] = field(default_factory=dict)  # placeholder -> original line
    out_lines: list[str] = field(default_factory=list)
    out_origin: list[tuple[int, int] | None] = field(default_factory=list)  # (cell, line) per out line
    out_numbers: list[int] = field(default_factory=list)  # joined-output line number per out line
    new_source: str | None = None


@dataclass
class NotebookResult(Outcome):
    """The notebook analogue of `results.TransformResult`; every finding carries its `cell`."""

    source: str
    output: str
    rules: list[str] = field(default_factory=list)
    todos: list[Finding] = field(default_factory=list)
    todos_in_source: list[Finding] = field(default_factory=list)
    changes: list[Finding] = field(default_factory=list)
    unsafe_fixes: list[Finding] = field(default_factory=list)
    unsafe_fixes_in_output: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    error: Finding | None = None
    cell_diffs: list[tuple[int, str, str]] = field(default_factory=list)  # (cell, before, after)

    def diff(self, path: str) -> str:
        """Unified diffs, one per changed cell, headed `a/PATH:cell_N`."""
        out = []
        for number, before, after in self.cell_diffs:
            out.extend(
                difflib.unified_diff(
                    _lines_nl(before), _lines_nl(after), fromfile=f"a/{path}:cell_{number}", tofile=f"b/{path}:cell_{number}"
                )
            )
        return "".join(out)


def transform_notebook(text: str, *, filename: str = "<notebook>", options: Options = Options(), locate: bool = True) -> NotebookResult:
    """Migrate one notebook's JSON text. Never raises; on error `output == text`.

    `locate=False`: nothing will read `todos_in_source` or `changes` (a run that writes files and
    reports no changed lines), so they are left empty and the rules' per-step line diffs, which
    locate them in the original cells, are never worked out."""
    if "tensorflow" not in text and "TODO(tfmigrate" not in text:
        return NotebookResult(text, text)
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        return NotebookResult(text, text, error=Finding("E005", exc.lineno, f"not a notebook: invalid JSON: {exc.msg}"))
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return NotebookResult(text, text, error=Finding("E005", 0, "not a notebook: no 'cells' list (nbformat 4 expected)"))
    if not _is_python(nb):
        return NotebookResult(text, text)
    try:
        return _transform(nb, text, filename, options, locate)
    except Exception as exc:  # noqa: BLE001 - per-file isolation, as in the engine
        return NotebookResult(text, text, error=Finding("E999", 0, f"internal error: {type(exc).__name__}: {exc}"))


def code_as_module(text: str) -> str | None:
    """The module a notebook's code cells migrate as: IPython lines masked, a marker statement
    between cells (None: not a Python notebook, or no code cell that parses)."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or not _is_python(nb):
        return None
    cells = _code_cells(nb, NotebookResult(text, text))
    return _joined(cells)[0] if cells else None


def _code_cells(nb: dict, result: NotebookResult) -> list[_Cell]:
    """The Python code cells, masked; a cell that does not parse gets a W001 warning in `result`."""
    cells: list[_Cell] = []
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        item = _Cell(index + 1, cell, _join(cell.get("source", "")))
        prepared = _mask(item.original, placeholder=f"__tfmigrate_magic_{index + 1}_{{}}__")
        if prepared is None:
            continue  # a non-Python cell magic (%%bash, %%writefile, ...)
        item.masked, item.magics, parses = prepared
        problem = None if parses else _syntax_error(item.masked)
        if problem is not None:
            line, message = problem
            result.warnings.append(Finding("W001", line, f"cell left untouched: syntax error: {message}", cell=item.number))
            continue
        cells.append(item)
    return cells


def _joined(cells: list[_Cell]) -> tuple[str, list[tuple[int, int] | None], dict[str, _Cell]]:
    """One module: cell 1, then a marker statement before each further cell; per joined line,
    (cell, line) or None for a marker; the markers' cells."""
    joined: list[str] = []
    where: list[tuple[int, int] | None] = []  # per joined line: (cell, line) or None for a marker
    markers: dict[str, _Cell] = {}
    for position, item in enumerate(cells):
        if position:
            marker = f"__tfmigrate_cell_{item.number}__"
            markers[marker] = item
            joined.append(marker)
            where.append(None)
        lines = item.masked.splitlines()
        joined.extend(lines)
        where.extend((item.number, n) for n in range(1, len(lines) + 1))
    return "\n".join(joined) + "\n", where, markers


def _transform(nb: dict, text: str, filename: str, options: Options, locate: bool = True) -> NotebookResult:
    result = NotebookResult(text, text)
    cells = _code_cells(nb, result)
    if not cells:
        return result
    source, where, markers = _joined(cells)
    migrated = transform_source(source, filename=filename, options=options)
    if migrated.error is not None:
        result.error = _locate(migrated.error, where)
        return result
    result.rules = migrated.rules

    # Split the output back at the markers.
    out = migrated.output.splitlines()
    locate = locate or bool(migrated.unsafe_fixes)  # (a `--safe-only` dry run's fixes are located in the output)
    current = cells[0]
    seen = [current]
    for number, line in enumerate(out, start=1):
        if line in markers:
            current = markers.pop(line)
            seen.append(current)
            continue
        origin = (migrated.source_line(number) if migrated.origin is not None else number) if locate else 0
        current.out_lines.append(line)
        current.out_origin.append(where[origin - 1] if 0 < origin <= len(where) else None)
        current.out_numbers.append(number)
    if markers or seen != cells:
        result.error = Finding("E006", 0, "internal error: could not map the migration back onto the notebook's cells")
        return result
    moved_to = _move_added_imports(cells, set(migrated.import_insertions))
    for item in cells:
        _trim_added_blank_lines(item)
        restored = _unmask(item)
        if restored is None:
            result.error = Finding("E006", 0, f"internal error: cell {item.number}: IPython lines could not be restored")
            return result
        if restored != item.original.splitlines():
            item.new_source = "\n".join(restored) + ("\n" if item.original.endswith("\n") else "")
        item.out_lines = restored

    by_number = {item.number: item for item in cells}
    for item in cells:
        for todo in scan_todos("\n".join(item.out_lines)):
            result.todos.append(Finding(todo.code, todo.line, todo.message, cell=item.number))
            if locate:
                src = item.out_origin[todo.line - 1] if todo.line <= len(item.out_origin) else None
                cell, line = src if src is not None else (item.number, todo.line)
                result.todos_in_source.append(Finding(todo.code, line, todo.message, cell=cell))
    result.changes = [_locate(f, where) for f in migrated.changes] if locate else []
    changed_cells = {item.number for item in cells if item.new_source is not None and item.new_source != item.original}
    if moved_to is not None:  # what the import pass did above the TensorFlow cell happened in it
        result.changes = [
            f if f.cell in changed_cells else Finding(f.code, moved_to[1], f.message, moved_to[1], cell=moved_to[0])
            for f in result.changes
        ]
    result.changes = [f for f in result.changes if f.cell in changed_cells]
    result.unsafe_fixes = [_locate(f, where) for f in migrated.unsafe_fixes]
    result.unsafe_fixes_in_output = [_to_output(f, by_number) for f in result.unsafe_fixes]

    changed = [item for item in cells if item.new_source is not None and item.new_source != item.original]
    if changed:
        for item in changed:
            before = item.cell.get("source", "")
            item.cell["source"] = item.new_source.splitlines(keepends=True) if isinstance(before, list) else item.new_source
            result.cell_diffs.append((item.number, item.original, item.new_source))
        result.output = dump_notebook(nb, like=text)
    return result


def dump_notebook(nb: dict, *, like: str) -> str:
    """JSON text for `nb` in the original's layout: its indent, its final newline, no \\u escapes."""
    match = re.match(r"[{\[]\r?\n( +)", like)
    indent = len(match.group(1)) if match else (None if "\n" not in like.strip() else 1)
    text = _indented(nb, indent) if indent is not None else None
    if text is None:
        text = json.dumps(nb, indent=indent, ensure_ascii=False)
    return text + ("\n" if like.endswith("\n") else "")


class _Unusual(Exception):
    """A value `_indented` leaves to the json module (a non-string key, a float it spells its own way)."""


def _indented(value: object, indent: int) -> str | None:
    """`json.dumps(value, indent=indent, ensure_ascii=False)`, built by joins: the json module's
    indenting encoder yields every token from a generator, and a notebook's outputs (images,
    logs) are most of its size. None where the json module must write it."""
    try:
        return _encode(value, "\n", " " * indent)
    except _Unusual:
        return None


def _encode(value: object, newline: str, step: str) -> str:
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = newline + step
        if not all(isinstance(key, str) for key in value):
            raise _Unusual
        items = (encode_basestring(key) + ": " + _encode(item, inner, step) for key, item in value.items())
        return "{" + inner + ("," + inner).join(items) + newline + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        inner = newline + step
        return "[" + inner + ("," + inner).join(_encode(item, inner, step) for item in value) + newline + "]"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    raise _Unusual


def _is_python(nb: dict) -> bool:
    meta = nb.get("metadata") or {}
    language = ((meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name") or "python")
    return str(language).lower() == "python"


def _join(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def _lines_nl(text: str) -> list[str]:
    return [line + "\n" for line in text.splitlines()]


def _mask(source: str, *, placeholder: str) -> tuple[str, dict[str, str], bool] | None:
    """(Python text, placeholder -> original line, whether that text is known to parse); None for a
    cell whose magic body is not Python."""
    lines = source.splitlines()
    magics: dict[str, str] = {}
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(maxsplit=1)[0] if lines[first].strip() != "%%" else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
        key = placeholder.format(len(magics))
        magics[key] = lines[first]
        lines[first] = key
    text = "\n".join(lines) + ("\n" if lines else "")
    if _syntax_error(text) is None:
        return text, magics, True  # (the cell's own parse: the caller need not parse it again)
    continued, indent = False, ""
    for i, line in enumerate(lines):
        if not (continued or _LINE_MAGIC.match(line) or (_HELP.match(line) and not line.lstrip().startswith("#"))):
            continue
        if not continued:
            indent = line[: len(line) - len(line.lstrip())]
        key = placeholder.format(len(magics))
        magics[key] = line
        lines[i] = indent + key
        continued = line.rstrip().endswith("\\")
    return "\n".join(lines) + ("\n" if lines else ""), magics, False


def _unmask(item: _Cell) -> list[str] | None:
    restored, found = [], set()
    for line in item.out_lines:
        key = line.strip()
        if key in item.magics:
            if key in found:
                return None
            found.add(key)
            restored.append(item.magics[key])
        else:
            restored.append(line)
    return restored if found == set(item.magics) else None


def _syntax_error(text: str) -> tuple[int, str] | None:
    try:
        compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 0, exc.msg
    return None


def _locate(finding: Finding, where: list[tuple[int, int] | None]) -> Finding:
    """A finding on joined-module lines, moved to (cell, line); a range is cut at its cell's end."""

    def at(line: int) -> tuple[int, int] | None:
        for probe in range(max(line, 1), len(where) + 1):  # a marker line: the cell it opens
            if where[probe - 1] is not None:
                return where[probe - 1]
        return next((w for w in reversed(where) if w is not None), None)

    start = at(finding.line)
    if start is None:
        return finding
    end_line = None
    if finding.end_line is not None:
        end = at(finding.end_line)
        if end is not None and end[0] == start[0]:
            end_line = max(end[1], start[1])
        else:
            end_line = max((w[1] for w in where if w is not None and w[0] == start[0]), default=start[1])
    return Finding(finding.code, start[1], finding.message, end_line, cell=start[0])


def _to_output(finding: Finding, cells: dict[int, _Cell]) -> Finding:
    item = cells.get(finding.cell or 0)
    if item is None:
        return finding

    def out_line(line: int) -> int:
        for index, origin in enumerate(item.out_origin, start=1):
            comment = item.out_lines[index - 1].lstrip().startswith("#")
            if origin is not None and origin[0] == item.number and origin[1] >= line and not comment:
                return index
        return max(len(item.out_lines), 1)

    end = out_line(finding.end_line) if finding.end_line is not None else None
    return Finding(finding.code, out_line(finding.line), finding.message, end, cell=finding.cell)


def _move_added_imports(cells: list[_Cell], insertions: set[int]) -> tuple[int, int] | None:
    """Imports the engine added above the cell importing TensorFlow move into that cell.

    The engine puts new imports after the module's leading import block, which is in another cell
    when the notebook opens with `!pip install ...` or `%matplotlib inline`; the blank line the
    import pass added after them goes too. Returns the (cell, line) they now start at, if moved.
    """
    if not insertions:
        return None
    # The cell that imported TensorFlow before the migration (its import may since have gone).
    target = next((item for item in cells if _tf_import_end(item.masked.splitlines()) is not None), None)
    if target is None:
        return None
    moving: list[str] = []
    for item in cells:
        if item is target:
            continue
        added = [
            i for i, number in enumerate(item.out_numbers)
            if number in insertions and item.out_lines[i].startswith(("import ", "from "))
        ]
        if not added:
            continue
        moving.extend(item.out_lines[i] for i in added)
        drop = set(added) | {i for i, number in enumerate(item.out_numbers) if number in insertions and not item.out_lines[i].strip()}
        for name in ("out_lines", "out_origin", "out_numbers"):
            values = getattr(item, name)
            setattr(item, name, [v for i, v in enumerate(values) if i not in drop])
    have = set(target.out_lines)
    add = [line for line in dict.fromkeys(moving) if line not in have]
    end = _tf_import_end(target.out_lines, any_import=True) or 0
    if not add:
        return (target.number, end) if moving else None
    anchor = target.out_origin[end - 1] if end else None
    target.out_lines[end:end] = add
    target.out_origin[end:end] = [anchor] * len(add)
    target.out_numbers[end:end] = [0] * len(add)
    return target.number, end + 1


def _tf_import_end(lines: list[str], *, any_import: bool = False) -> int | None:
    """The last line of the run of top-level imports holding a TensorFlow import (with `any_import`,
    failing that, of the first run of imports), if there is one."""
    try:
        body = ast.parse("\n".join(lines)).body
    except SyntaxError:
        return None
    starts = [i for i, node in enumerate(body) if _imports_tensorflow(node)]
    if not starts and any_import:
        starts = [i for i, node in enumerate(body) if isinstance(node, (ast.Import, ast.ImportFrom))]
    if not starts:
        return None
    j = starts[0]
    while j + 1 < len(body) and isinstance(body[j + 1], (ast.Import, ast.ImportFrom)):
        j += 1
    return body[j].end_lineno


def _imports_tensorflow(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "tensorflow" for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "tensorflow" and not node.level
    return False


def _trim_added_blank_lines(item: _Cell) -> None:
    """Blank lines the migration left at the end of a cell that the cell did not have."""
    def trailing(lines: list[str]) -> int:
        n = 0
        while n < len(lines) and not lines[-1 - n].strip():
            n += 1
        return n

    extra = trailing(item.out_lines) - trailing(item.masked.splitlines())
    for _ in range(max(extra, 0)):
        item.out_lines.pop()
        item.out_origin.pop()
