"""What a run prints for people: one `path:line: CODE message` line per finding, the summary, progress.

`path:line:` becomes `path:cell_N:line:` for a notebook cell. Under --check/--diff every place a rule
would change is listed (`would change`), so a pre-commit hook names file, line and rule.
"""

from __future__ import annotations

from typing import IO

import click

from .engine import Finding
from .runner import CHECK, DIFF, WRITE, FileOutcome, summarize

# Fewer files than this finish before a progress bar would be worth drawing.
PROGRESS_MIN_FILES = 20


def display_path(path: str) -> str:
    """The path as printed: quoted (Python string syntax) when it holds a newline or another
    control character, so `path:line:` stays one parsable line."""
    if path.isprintable():
        return path
    return repr(path)


def where(path: str, finding: Finding) -> str:
    path = display_path(path)
    cell = f":cell_{finding.cell}" if finding.cell is not None else ""
    return f"{path}{cell}:{finding.line}" if finding.line else f"{path}{cell}"


def _span(finding: Finding) -> str:
    if finding.end_line is not None and finding.end_line != finding.line:
        return f"lines {finding.line}-{finding.end_line}"
    return f"line {finding.line}"


def outcome_lines(outcome: FileOutcome, mode: str, *, quiet: bool = False) -> list[str]:
    """The stderr lines for one file, in line order (errors always, the rest unless `quiet`)."""
    lines: list[tuple[int, int, str]] = []

    def add(finding: Finding, text: str) -> None:
        lines.append((finding.cell or 0, finding.line, f"{where(outcome.path, finding)}: {text}"))

    for error in outcome.errors:
        add(error, f"error {error.code}: {error.message}")
    if quiet:
        return [text for _, _, text in sorted(lines, key=lambda x: (x[0], x[1]))]
    if mode in (CHECK, DIFF):
        for change in outcome.changes:
            add(change, f"{change.code} would change {_span(change)}: {change.message}")
    for fix in outcome.unsafe_fixes:
        add(fix, f"{fix.code} unsafe fix available ({_span(fix)}; not applied under --safe-only): {fix.message}")
    for todo in outcome.todos:
        add(todo, f"{todo.code} {todo.message}")
    for warning in outcome.warnings:
        add(warning, f"{warning.code} {warning.message}")
    out = [text for _, _, text in sorted(lines, key=lambda x: (x[0], x[1]))]
    if mode == WRITE and outcome.written_to and outcome.changed:
        dest = f" -> {display_path(outcome.written_to)}" if outcome.written_to != outcome.path else ""
        out.append(f"migrated {display_path(outcome.path)}{dest}")
    elif mode == CHECK and outcome.changed:
        out.append(f"would migrate {display_path(outcome.path)}")
    return out


def summary_lines(outcomes: list[FileOutcome], mode: str) -> list[str]:
    """The closing summary: files changed / TODOs / failed / unchanged, then counts by rule."""
    summary = summarize(outcomes)
    verb = "changed" if mode == WRITE else "would change"
    lines = [
        f"tfmigrate: {summary['files']} files: {summary['changed']} {verb}, {summary['todos']} TODOs left "
        f"in {summary['todo']} files, {summary['error']} failed, {summary['not_changed']} unchanged."
    ]
    tiers = [f"{count} {tier}" for tier, count in summary["estimators"].items() if count]
    if tiers:
        lines.append("tfmigrate: estimators: " + ", ".join(tiers))
    if summary["todos_by_rule"]:
        lines.append("tfmigrate: TODOs by rule: " + _counts(summary["todos_by_rule"]))
    if summary["unsafe_fixes_by_rule"]:
        lines.append("tfmigrate: unsafe fixes not applied (--safe-only): " + _counts(summary["unsafe_fixes_by_rule"]))
    if summary["warnings"]:
        lines.append(f"tfmigrate: {summary['warnings']} notebook cell(s) left untouched (W001).")
    return lines


def _counts(by_rule: dict[str, int]) -> str:
    return ", ".join(f"{code} {count}" for code, count in by_rule.items())


class Progress:
    """A click progress bar on stderr, drawn only for long runs on a terminal (never in CI or tests)."""

    def __init__(self, stream: IO[str], *, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.bar = None

    @staticmethod
    def wanted(stream: IO[str], *, quiet: bool = False) -> bool:
        isatty = getattr(stream, "isatty", None)
        return not quiet and bool(isatty and isatty())

    def start(self, total: int) -> None:
        if self.enabled and total >= PROGRESS_MIN_FILES:
            self.bar = click.progressbar(length=total, label="tfmigrate", file=self.stream, show_pos=True)
            self.bar.__enter__()

    def advance(self, _outcome: FileOutcome) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
