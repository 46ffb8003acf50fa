"""Embedding: the `Embedder` protocol, its kinds and factory, the question path, the cache.

`get_embedder` builds the embedder a store names (sentence-transformers over the bundled
all-MiniLM-L6-v2, or the model-free hash embedder for tests and size benchmarks);
`query_model` runs questions through the same model exported to ONNX Runtime, without torch
(`query_tokenizer` cuts them into word pieces, `query_files` keeps the export and its record,
`windows` cuts a long text as documents are cut); and
`embed_with_cache` embeds only what the database's cache (model id, content hash) lacks, and
`embed_spans_with_cache` a text's sentences in the text's own pass (the sentence index's);
`model_languages` says which languages a model was trained on (`model_card`).
"""

from __future__ import annotations

from windowpack.embed.cache import embed_spans_with_cache, embed_with_cache
from windowpack.embed.embedder import (
    HASH_EMBEDDER,
    Embedder,
    InContextEmbedder,
    SentenceTransformerEmbedder,
    Spans,
    Vectors,
    bundled_model_path,
    get_embedder,
    model_languages,
)
from windowpack.embed.timing import timed_calls

__all__ = [
    "HASH_EMBEDDER",
    "Embedder",
    "InContextEmbedder",
    "SentenceTransformerEmbedder",
    "Spans",
    "Vectors",
    "bundled_model_path",
    "embed_spans_with_cache",
    "embed_with_cache",
    "get_embedder",
    "model_languages",
    "timed_calls",
]
