"""A collection's chunks as the baselines see them: texts in document order and their vectors.

The vectors are the ones windowpack computed at ingest (same model, same text), so the dense
and llama-index baselines embed only the query, never the corpus again.

One difference from windowpack's own chunks, so that the baselines are what a user would
run: windowpack chunks a chat one message per chunk (its turn units keep request and reply
together), while a generic RAG pipeline chunks the transcript by size, so a request shares a
chunk with the start of its reply. The view therefore joins each request chunk to the chunk
after it; the joined chunk's vector is the normalised mean of the two, as windowpack's
embedder pools a text longer than the model reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from windowpack.embed import Embedder

if TYPE_CHECKING:
    from windowpack.service import Collection, Store


_REQUEST = re.compile(r"^\s*(?:user|human)\s*:", re.IGNORECASE)
_REPLY = re.compile(r"^\s*(?:assistant|ai|model|bot)\s*:", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class ChunkView:
    """Chunk `i` is `texts[i]` with vector `vectors[i]`; `i` is its place in document order."""

    texts: list[str]
    vectors: npt.NDArray[np.float32]
    embedder: Embedder


def chunk_view(store: Store, collection: Collection) -> ChunkView:
    """The chunks of `collection` in (document, ordinal) order with their stored vectors, a
    chat's requests joined to the chunk that follows them."""
    texts, vectors = collection.chunk_vectors()
    texts, vectors = _requests_joined(texts, vectors)
    return ChunkView(texts=texts, vectors=vectors, embedder=store.embedder)


def _requests_joined(
    texts: list[str], vectors: npt.NDArray[np.float32]
) -> tuple[list[str], npt.NDArray[np.float32]]:
    joined_texts: list[str] = []
    joined_vectors: list[npt.NDArray[np.float32]] = []
    index = 0
    while index < len(texts):
        if (
            _REQUEST.match(texts[index])
            and index + 1 < len(texts)
            and _REPLY.match(texts[index + 1])
        ):
            mean = vectors[index] + vectors[index + 1]
            joined_texts.append(f"{texts[index]}\n\n{texts[index + 1]}")
            joined_vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
            index += 2
        else:
            joined_texts.append(texts[index])
            joined_vectors.append(vectors[index])
            index += 1
    if not joined_vectors:
        return texts, vectors
    return joined_texts, np.vstack(joined_vectors).astype(np.float32)
