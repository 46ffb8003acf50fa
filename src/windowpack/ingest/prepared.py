"""The documents of an ingest before they are written: checked, told apart from those stored
unchanged, chunked, and made the leaves of their summary trees."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from windowpack.documents import Chunk, checked_identity, fingerprint, natural_units
from windowpack.ingest.target import IngestTarget
from windowpack.storage import ChunkRow, DocumentRow, repository
from windowpack.summarizer import BuiltNode, DocumentOutline, TreeItem, document_outline
from windowpack.text import content_hash
from windowpack.types import Document, Span


@dataclass(kw_only=True)
class PreparedDocument:
    """One document of an ingest: its identity, chunks, tree leaves and levels, and its
    position (None until it is given one; a replaced document keeps its own)."""

    document: Document
    external_id: str
    text_hash: str
    chunks: list[Chunk]
    position: int | None = None
    # The chunks as tree leaves: each chunk's text sliced and hashed once, reused by the tree,
    # the embedding and the insert.
    leaves: list[TreeItem] = field(default_factory=list)
    levels: list[list[BuiltNode]] = field(default_factory=list)


def prepare_document(document: Document, index: int) -> PreparedDocument:
    """`document` checked (its id and text hash), with its natural units."""
    external_id, text_hash = checked_identity(document, index)
    # A chat's turns and a markdown document's sections are its units unless the caller set
    # them: windows keep them whole. A copy, so the caller's document is left as it was.
    document = replace(document, units=natural_units(document))
    return PreparedDocument(
        document=document, external_id=external_id, text_hash=text_hash, chunks=[]
    )


def split_unchanged(
    prepared: list[PreparedDocument], target: IngestTarget
) -> tuple[list[PreparedDocument], int]:
    """The documents that differ from what is stored (each given the position of the one it
    replaces), and how many are stored unchanged."""
    with target.sessions() as session:
        existing = repository.documents_by_external_id(
            session, target.collection_id, [item.external_id for item in prepared]
        )
        changed = []
        for item in prepared:
            row = existing.get(item.external_id)
            if row is not None and _fingerprint_of_row(row) == _fingerprint(item):
                continue
            item.position = row.position if row is not None else None
            changed.append(item)
    return changed, len(prepared) - len(changed)


def _fingerprint(item: PreparedDocument) -> str:
    document = item.document
    units = [[unit.start, unit.end] for unit in document.units] if document.units else None
    return fingerprint(item.text_hash, document.title, document.kind, document.metadata, units)


def _fingerprint_of_row(row: DocumentRow) -> str:
    return fingerprint(row.text_hash, row.title, row.kind, row.meta, row.units)


def leaves_of(item: PreparedDocument) -> list[TreeItem]:
    """The item's chunks as the leaves of its summary tree."""
    leaves = []
    for ordinal, chunk in enumerate(item.chunks):
        text = item.document.text[chunk.start : chunk.end]
        leaves.append(
            chunk_leaf(text, chunk.tokens, content_hash(text), ordinal, chunk.start, chunk.end)
        )
    return leaves


def chunk_leaf(
    text: str, tokens: int, text_hash: str, ordinal: int, start: int, end: int
) -> TreeItem:
    """A chunk as a level-0 item of the summary tree."""
    return TreeItem(
        text=text,
        tokens=tokens,
        content_hash=text_hash,
        level=0,
        leaf_start=ordinal,
        leaf_end=ordinal + 1,
        char_start=start,
        char_end=end,
    )


def stored_chunk_items(rows: Sequence[ChunkRow]) -> list[TreeItem]:
    """A stored document's chunks as the leaves of its summary tree."""
    return [
        chunk_leaf(
            row.text, row.token_count, row.text_hash, row.ordinal, row.char_start, row.char_end
        )
        for row in rows
    ]


def stored_outline(document: DocumentRow, rows: Sequence[ChunkRow]) -> DocumentOutline | None:
    """A stored document's outline, for its summary tree."""
    return document_outline(
        text=document.text,
        kind=document.kind,
        units=[Span(start=start, end=end) for start, end in document.units or []],
        chunk_units=[row.unit for row in rows],
    )


def texts_to_index(changed: Sequence[PreparedDocument]) -> tuple[list[str], list[str]]:
    """Texts and hashes of the chunks, then nodes bottom-up, per document, in the order
    `pipeline` inserts them."""
    texts: list[str] = []
    hashes: list[str] = []
    for item in changed:
        texts.extend(leaf.text for leaf in item.leaves)
        hashes.extend(leaf.content_hash for leaf in item.leaves)
        node_texts = [node.text for level in item.levels for node in level]
        texts.extend(node_texts)
        hashes.extend(content_hash(text) for text in node_texts)
    return texts, hashes
