"""What a run prints for people: one `path:line: CODE message` line per finding, the summary, progress.

`path:line:` becomes `path:cell_N:line:` for a notebook cell. Under --check/--diff every place a rule
would change is listed (`would change line N: tf.logging.info -> logging.info`), so a pre-commit
hook names file, line, rule and what would happen. Diagnostics and the summary go to stdout (like
ruff's), errors to stderr; `--statistics` counts the diagnostics instead of listing them.
"""

from __future__ import annotations

import re
from typing import IO

import click

from .results import Finding
from .results import TODO
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


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """`1 file`, `2 files`, `12,000 lines`."""
    return f"{count:,} {noun if count == 1 else plural_form or noun + 's'}"


def error_lines(outcome: FileOutcome) -> list[str]:
    """The stderr lines for one file: its errors (E00x), always printed."""
    return [f"{where(outcome.path, error)}: error {error.code}: {error.message}" for error in outcome.errors]


def diagnostics(outcome: FileOutcome, mode: str) -> list[tuple[Finding, str]]:
    """(finding, text) for everything a person should look at in one file, errors aside: what
    would change (--check/--diff), unsafe fixes not applied, TODOs left, cells skipped."""
    out: list[tuple[Finding, str]] = []
    if mode in (CHECK, DIFF):
        out += [(change, f"would change {_span(change)}: {change.message}") for change in outcome.changes]
    out += [(fix, f"unsafe fix available ({_span(fix)}; not applied under --safe-only): {fix.message}") for fix in outcome.unsafe_fixes]
    out += [(todo, f"TODO: {todo.message}") for todo in outcome.todos]
    out += [(warning, warning.message) for warning in outcome.warnings]
    return out


def outcome_lines(outcome: FileOutcome, mode: str, *, quiet: bool = False, statistics: bool = False) -> list[str]:
    """The stdout lines for one file: `path:line: CODE text` per diagnostic in line order, then what
    became of the file (nothing under `quiet`, or `statistics`, which counts them instead)."""
    if quiet or statistics:
        return []
    found = sorted(diagnostics(outcome, mode), key=lambda item: (item[0].cell or 0, item[0].line))
    out = [f"{where(outcome.path, finding)}: {finding.code} {text}" for finding, text in found]
    todos = f" ({plural(len(outcome.todos), 'TODO')})" if outcome.todos else ""
    if mode == WRITE and outcome.written_to and outcome.changed:
        dest = f" -> {display_path(outcome.written_to)}" if outcome.written_to != outcome.path else ""
        verb = "partly migrated" if outcome.status == TODO else "migrated"
        out.append(f"{verb} {display_path(outcome.path)}{dest}{todos}")
    elif mode == CHECK and outcome.changed:
        verb = "would partly migrate" if outcome.status == TODO else "would migrate"
        out.append(f"{verb} {display_path(outcome.path)}{todos}")
    return out


def statistics_lines(outcomes: list[FileOutcome], mode: str) -> list[str]:
    """`--statistics`, like ruff's: one line per (code, message), the most frequent first."""
    counts: dict[tuple[str, str], int] = {}
    for outcome in outcomes:
        for finding, text in diagnostics(outcome, mode):
            if text.startswith("would change "):
                text = "would change: " + text.split(": ", 1)[1]
            elif text.startswith("unsafe fix available ("):
                text = "unsafe fix available: " + text.split(": ", 1)[1]
            key = (finding.code, re.sub(r"\(for line \d+\) ", "", text))
            counts[key] = counts.get(key, 0) + 1
        for error in outcome.errors:
            key = (error.code, f"error: {error.message}")
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    width = len(f"{max(counts.values()):,}")
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [f"{count:>{width},}\t{code}\t{text}" for (code, text), count in ordered]


def summary_lines(outcomes: list[FileOutcome], mode: str) -> list[str]:
    """The closing summary: files fully/partly migrated, failed, unchanged; estimators by tier;
    TODOs by rule."""
    summary = summarize(outcomes)
    fully = "migrated fully" if mode == WRITE else "would be migrated fully"
    parts = [
        f"{summary['migrated']:,} {fully}",
        f"{summary['todo']:,} partly ({plural(summary['todos'], 'TODO')} left)",
        f"{summary['error']:,} failed",
        f"{summary['unchanged']:,} unchanged",
    ]
    lines = [f"tfmigrate: {plural(summary['files'], 'file')}: " + ", ".join(parts) + "."]
    tiers = [f"{count} {tier}" for tier, count in summary["estimators"].items() if count]
    if tiers:
        lines.append("tfmigrate: estimators: " + ", ".join(tiers))
    if summary["todos_by_rule"]:
        lines.append("tfmigrate: TODOs by rule: " + _counts(summary["todos_by_rule"]))
    if summary["unsafe_fixes_by_rule"]:
        lines.append("tfmigrate: unsafe fixes not applied (--safe-only): " + _counts(summary["unsafe_fixes_by_rule"]))
    if summary["warnings"]:
        lines.append(f"tfmigrate: {plural(summary['warnings'], 'notebook cell')} left untouched (W001).")
    return lines


def timing_line(outcomes: list[FileOutcome], seconds: float) -> str:
    """`tfmigrate: 122 files, 52,811 lines in 4.4 s (12,000 lines/s)`."""
    lines = sum(outcome.lines for outcome in outcomes)
    rate = f" ({round(lines / seconds):,} lines/s)" if seconds > 0 and lines else ""
    return f"tfmigrate: {plural(len(outcomes), 'file')}, {plural(lines, 'line')} in {seconds:.1f} s{rate}"


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
