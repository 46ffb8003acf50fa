"""What the CLI prints: reports, hits, the summary tree, a window's cache note.

Labels count from 1, as the window's headers do: a hit's `ordinal` 0 is "chunk 1".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.padding import Padding
from rich.table import Table

if TYPE_CHECKING:
    from windowpack.types import Hit, IngestReport, TreeNode, TreeOverview, Window

console = Console()
errors = Console(stderr=True)


def cache_note(window: Window) -> str:
    """What the cacheable prefix is worth: which providers' minimums it reaches."""
    from windowpack.prompt_cache import PROMPT_CACHE_MINIMUMS

    note = f"cacheable prefix {window.cacheable_prefix_tokens:,} tokens"
    missed = [name for name, reached in window.prefix_cache().items() if not reached]
    if not missed:
        return note + " (reaches every provider's cache minimum)"
    shortest = min(PROMPT_CACHE_MINIMUMS[name] for name in missed)
    return note + (
        f", below the prompt-cache minimum of {', '.join(missed)} "
        f"({shortest:,}+ tokens; --align-to {shortest} pads it when the budget allows)"
    )


def print_report(report: IngestReport, *, root_given: bool | None = None) -> None:
    """The report on stdout, its warnings on stderr (`root_given`: see `print_duplicates`)."""
    # `summaries` counts the nodes summarised afresh, not the tree's nodes: say so.
    console.print(
        f"added {report.added:,}, replaced {report.replaced:,}, unchanged {report.unchanged:,}: "
        f"{report.chunks:,} chunks, {report.tokens:,} tokens, "
        f"{report.summaries:,} summarised afresh, {report.embedded:,} texts embedded afresh; "
        f"index version {report.index_version}",
        soft_wrap=True,  # one line, as scripts and logs read it
    )
    print_duplicates(report, root_given=root_given)


def print_duplicates(report: IngestReport, *, root_given: bool | None = None) -> None:
    """The report's warnings on stderr: summaries that fell back, files skipped, documents
    added with the text of another, and the report's own `warnings`. `root_given`: whether
    the files' ids came from `--root` (None: not a file ingest), which says what to
    suggest."""
    for node, reason in report.summary_failures.items():
        errors.print(
            f"summary of {node} fell back to extractive: {reason}", highlight=False, soft_wrap=True
        )
    for path, reason in report.skipped.items():
        errors.print(
            f"[yellow]skipped[/] {reason}" if path in reason else f"skipped {path}: {reason}",
            soft_wrap=True,
        )
    for warning in report.warnings:
        errors.print(f"[yellow]warning[/] {warning}", highlight=False, soft_wrap=True)
    if report.duplicates:
        # Unwrapped: rich would fold a long path mid-name, and a path must stay copyable.
        errors.print(
            _duplicates_warning(report.duplicates, root_given), highlight=False, soft_wrap=True
        )


_DUPLICATES_SHOWN = 3


def _duplicates_warning(duplicates: dict[str, str], root_given: bool | None) -> str:
    count = len(duplicates)
    pairs = list(duplicates.items())[:_DUPLICATES_SHOWN]
    shown = "; ".join(f"{new} has the text of {old}" for new, old in pairs)
    more = f" (and {count - len(pairs):,} more)" if count > len(pairs) else ""
    what = "document was" if count == 1 else "documents were"
    warning = (
        f"[yellow]warning:[/] {count:,} {what} added with the same text as another "
        f"already there: {shown}{more}."
    )
    if root_given is None:
        return warning
    root = _earlier_root(duplicates)
    if root_given:
        earlier = root if root is not None else "the folder they were ingested from"
        return warning + f" File ids are paths relative to --root: should it be {earlier}?"
    hint = (
        f"--root {root}" if root is not None else "--root with the folder they were ingested from"
    )
    return warning + (
        " File ids are paths relative to --root (default: the folder that holds the store); "
        f"to update the documents these files already are instead of adding copies, pass {hint}."
    )


def _earlier_root(duplicates: dict[str, str]) -> str | None:
    """The folder the earlier ids were relative to, when every pair says the same: the new id
    `/tmp/pgdocs/a.html` of `pgdocs/a.html` was ingested from `/tmp`."""
    roots = {
        new[: -len(old) - 1]
        for new, old in duplicates.items()
        if new.endswith(f"/{old}") and not old.startswith("/")
    }
    if len(roots) != 1:
        return None
    return roots.pop() or "/"


def print_tree(overview: TreeOverview) -> None:
    table = Table(title=f"{overview.documents} documents", title_justify="left")
    for column in ("scope", "level", "nodes", "tokens"):
        table.add_column(column, justify="left" if column == "scope" else "right")
    table.add_row("chunks", "0", f"{overview.chunks:,}", f"{overview.chunk_tokens:,}")
    for level in overview.levels:
        table.add_row(level.scope, str(level.level), f"{level.nodes:,}", f"{level.tokens:,}")
    console.print(table)
    console.print(
        f"summaries: {overview.summary_tokens:,} tokens = {overview.summary_ratio:.1%} of the "
        f"chunks; root node: {overview.root_id}"
    )


def print_node(node: TreeNode) -> None:
    scope = f"document {node.document_id}" if node.document_id else "collection"
    console.print(
        f"[bold]node {node.id}[/]: level {node.level} of {scope}, {_leaves(node)}, "
        f"{node.tokens} tokens, parent {node.parent_id}, "
        f"by {node.summarizer}",
        highlight=False,
    )
    console.print(Padding(node.text, (0, 0, 1, 4)), highlight=False)
    for child in node.children:
        chunk = f"chunk {child.ordinal + 1}" if child.ordinal is not None else "chunk"
        label = f"node {child.node_id}" if child.kind == "node" else chunk
        console.print(f"  - {label} of {child.document_id or 'collection'} ({child.tokens} tokens)")


def _leaves(node: TreeNode) -> str:
    what = "chunks" if node.document_id else "documents"
    return f"{what} {node.leaf_start + 1}-{node.leaf_end}"


def print_hits(hits: list[Hit]) -> None:
    if not hits:
        console.print("no hits")
    for rank, hit in enumerate(hits, start=1):
        # Labels count from 1, as the window's headers do (`ordinal` 0 is chunk 1).
        where = f"chunk {hit.ordinal + 1}"
        if hit.kind == "summary" and hit.last_ordinal is not None:
            where = f"level-{hit.level} summary of chunks {hit.ordinal + 1}-{hit.last_ordinal + 1}"
        if hit.span is not None:
            where += f", chars {hit.span.start}-{hit.span.end}"
        if hit.unit is not None:
            where = f"{_unit_label(hit)}, {where}"
        console.print(
            f"[bold]{rank}.[/] {hit.title or hit.document_id} [dim]({hit.document_id}; "
            f"{where}; score {hit.score:.3f})[/]",
            highlight=False,
        )
        console.print(Padding(hit.text, (0, 0, 1, 4)), highlight=False)


def _unit_label(hit: Hit) -> str:
    """`section 3: Guide › Install › Linux`, `turn 45`, `record 2`: the unit as its document's
    kind names it, a section with its heading path."""
    from windowpack.documents import PATH_SEPARATOR

    label = f"{hit.unit_name or 'part'} {(hit.unit or 0) + 1}"
    return f"{label}: {PATH_SEPARATOR.join(hit.heading_path)}" if hit.heading_path else label


def window_json(
    window: Window, *, messages: bool, cache_control: bool, include_question: bool
) -> dict[str, object]:
    """What `pack --json` prints of a window: its fields, `prefix_cache`, and with
    `messages` its chat messages."""
    from dataclasses import asdict

    shown = {**asdict(window), "prefix_cache": window.prefix_cache()}
    # The REST answer's shapes: `index_versions` a mapping, not pairs.
    shown["index_versions"] = dict(window.index_versions)
    if messages:
        chat = window.messages(cache_control=cache_control, include_question=include_question)
        shown["messages"] = chat
    return shown
