"""Corpora the adapter tests share (imported by conftest and by test modules)."""

from __future__ import annotations

import windowpack as wp

STATION_PARTS = [
    "generator", "ferry", "radar", "barometer", "rota", "fuel", "winch", "beacon", "sled", "mast",
    "hut", "lichen", "seal", "owl", "ice", "melt", "storm", "cable", "pump", "valve",
]  # fmt: skip


def many_documents() -> list[wp.Document]:
    """Twenty short documents: enough for several collection-level summaries (fan-out 8)."""
    documents = []
    for index, part in enumerate(STATION_PARTS):
        paragraphs = [
            f"Section {section} about the {part}. The {part} log number {index}{section} records "
            f"routine checks, spare parts and who signed off the work on day {section + 3}."
            for section in range(6)
        ]
        documents.append(
            wp.Document(text="\n\n".join(paragraphs), id=f"{part}-notes", title=f"{part} notes")
        )
    return documents
