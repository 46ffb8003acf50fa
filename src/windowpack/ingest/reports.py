"""What an ingest reports: documents added, replaced and unchanged, chunks, tokens, texts
embedded and nodes summarised afresh, the documents added with another's text, and what a
reader will stumble on (most documents of the call sharing one title)."""

from __future__ import annotations

from collections.abc import Sequence

from windowpack.documents import shared_title_warning
from windowpack.ingest.prepared import PreparedDocument
from windowpack.summarizer import TreeStats
from windowpack.types import IngestReport


def merged_stats(first: TreeStats, second: TreeStats) -> TreeStats:
    """Two tree builds' statistics as one."""
    return TreeStats(
        summarised=first.summarised + second.summarised,
        cached=first.cached + second.cached,
        outlined=first.outlined + second.outlined,
        failures={**first.failures, **second.failures},
    )


def ingest_report(
    prepared: Sequence[PreparedDocument],
    *,
    unchanged: int,
    version: int,
    skipped: dict[str, str] | None,
    replaced: int = 0,
    embedded: int = 0,
    tree: TreeStats | None = None,
    duplicates: dict[str, str] | None = None,
) -> IngestReport:
    """The report of an ingest of `prepared`, `unchanged` of which were stored already;
    `duplicates`: the documents added with another's text, mapped to its id."""
    written = [item for item in prepared if item.chunks]
    shared_title = shared_title_warning([item.document for item in prepared])
    return IngestReport(
        added=len(prepared) - unchanged - replaced,
        replaced=replaced,
        unchanged=unchanged,
        chunks=sum(len(item.chunks) for item in written),
        tokens=sum(chunk.tokens for item in written for chunk in item.chunks),
        embedded=embedded,
        index_version=version,
        skipped=dict(skipped or {}),
        summaries=tree.summarised if tree else 0,
        summary_failures=dict(tree.failures) if tree else {},
        duplicates=dict(duplicates or {}),
        warnings=[shared_title] if shared_title else [],
    )
