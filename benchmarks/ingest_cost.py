"""What ingest with every index on costs against the model's own pass over the chunks, and
against llama-index's ingest of the same pages.

Issue 41 asks for ingest at the embedder's speed: the sentence signal at most 1.3x what
embedding the chunks alone costs. One process, the model loaded and warmed up before any
timing, three passes over the same documents, each timed in wall and process CPU seconds:

- `raw encode, chunks`: the bundled model's own `encode` over the chunks exactly as ingest
  cuts them (`chunk_document`, the store's tokenizer and chunk size): the floor;
- `windowpack ingest`: `Collection.add` into a fresh embedded store with the default
  configuration (BM25, chunk vectors, the sentence index, the summary tree), nothing cached;
- `llama-index ingest`: `VectorStoreIndex.from_documents` over `SentenceSplitter` nodes of
  the same size, with the same model through `HuggingFaceEmbedding` (what a llama-index user
  runs on the same pages); skipped with `--no-llama-index`.

Tokens/s are the corpus's tokens (the store's tokenizer) over each pass's wall time. CORPUS is
a folder of `examples/manuals` (`python`, `sqlite`, ...: its pages, `make manuals`) or anything
`parse_paths` takes; `--limit-tokens N` keeps the first N tokens. Run it alone on a quiet
machine and give the load average with its figures:

    .venv/bin/python benchmarks/ingest_cost.py sqlite --limit-tokens 200000

`--smoke` runs it in seconds with the hash embedder (no raw encode, no llama-index).
Figures are printed and written to `benchmarks/results/ingest-cost.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench_common import (
    ESSAYS_JSON,
    REPO_ROOT,
    SMOKE_TOKENS,
    add_smoke_option,
    count_tokens,
    limit_tokens,
    load_corpus,
    machine_info,
    need,
    store_folder,
    write_results,
)

import windowpack as wp
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig
from windowpack.documents import chunk_document
from windowpack.embed import (
    HASH_EMBEDDER,
    SentenceTransformerEmbedder,
    bundled_model_path,
    get_embedder,
)
from windowpack.evals import load_manual
from windowpack.index import novel_pieces
from windowpack.text import get_token_counter

MANUALS = REPO_ROOT / "examples" / "manuals"
T = TypeVar("T")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    config = StoreConfig(embedder=HASH_EMBEDDER if args.smoke else args.embedder)
    counter = get_token_counter(config.tokenizer)
    documents = _documents(args.corpus, max_bytes=config.max_file_bytes)
    if args.limit_tokens:
        documents = limit_tokens(documents, counter, args.limit_tokens)
    tokens = count_tokens(documents, counter)
    chunks = [
        document.text[span.start : span.end]
        for document in documents
        for span in chunk_document(document, counter, config.chunk_tokens)
    ]
    pieces = [text[a:b] for text in chunks for _, (a, b) in novel_pieces(text)]
    print(
        f"{args.corpus}: {len(documents):,} documents, {tokens:,} {config.tokenizer} tokens, "
        f"{len(chunks):,} chunks, {len(pieces):,} novel pieces "
        f"({sum(map(len, pieces)) / max(1, sum(map(len, chunks))):.1%} of the chunks' characters)"
    )
    embedder = get_embedder(config.embedder, batch_size=config.embed_batch_size)
    embedder.embed(chunks[:32])  # load and warm the model: no pass pays for it
    passes: dict[str, dict[str, float]] = {}
    if isinstance(embedder, SentenceTransformerEmbedder):
        model = embedder.model
        passes["raw encode, chunks"] = _timed(
            lambda: model.encode(
                chunks,
                batch_size=config.embed_batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        )
    with store_folder(None, "wp-ingest-cost-") as folder, wp.open(folder, config=config) as store:
        collection = store.collection("ingest-cost")
        passes["windowpack ingest"] = _timed(lambda: collection.add(documents))
    if isinstance(embedder, SentenceTransformerEmbedder) and not args.no_llama_index:
        passes["llama-index ingest"] = _timed(_llama_index_ingest(documents, config))
    floor = passes.get("raw encode, chunks")
    for name, figures in passes.items():
        figures["tokens_per_s"] = tokens / figures["wall_s"]
        if floor:
            figures["wall_x_raw"] = figures["wall_s"] / floor["wall_s"]
            figures["cpu_x_raw"] = figures["cpu_s"] / floor["cpu_s"]
        print(f"  {name:20s} " + "  ".join(f"{k} {v:,.2f}" for k, v in figures.items()))
    results = {
        "corpus": str(args.corpus),
        "documents": len(documents),
        "tokens": tokens,
        "chunks": len(chunks),
        "novel_pieces": len(pieces),
        "passes": passes,
        "machine": machine_info(),
    }
    print(f"Figures written to {write_results('ingest-cost', results)}")
    return 0


def _documents(corpus: str, *, max_bytes: int) -> list[wp.Document]:
    """A manual's pages (a folder name of examples/manuals) or the documents at a path."""
    folder = MANUALS / corpus
    if (folder / "manual.json").is_file():
        pages = Path(json.loads((folder / "manual.json").read_text())["corpus"])
        need([pages], what=f"the pages of {corpus} (make manuals)")
        return list(load_manual(folder, max_bytes=10**9).documents)
    need([Path(corpus)], what=corpus)
    return list(load_corpus([Path(corpus).resolve()], max_bytes=max_bytes).documents)


def _llama_index_ingest(documents: Sequence[wp.Document], config: StoreConfig) -> Callable[[], Any]:
    """A call that builds the index a llama-index user builds over the same documents: a
    `VectorStoreIndex` from `SentenceSplitter` nodes of the store's chunk size (no overlap),
    embedded by the same model through `HuggingFaceEmbedding` in batches of the store's size
    (its imports and model load done before, untimed)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    path = bundled_model_path() if config.embedder == DEFAULT_EMBEDDER else config.embedder
    model = HuggingFaceEmbedding(model_name=path, device="cpu")
    model.embed_batch_size = config.embed_batch_size
    model.get_text_embedding("warm up")
    splitter = SentenceSplitter(chunk_size=config.chunk_tokens, chunk_overlap=0)
    pages = [Document(text=document.text, id_=document.id) for document in documents]
    return lambda: VectorStoreIndex.from_documents(
        pages, embed_model=model, transformations=[splitter]
    )


def _timed(call: Callable[[], T]) -> dict[str, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "corpus",
        nargs="?",
        default=str(ESSAYS_JSON),
        help="a folder name of examples/manuals, or a path (default: the essays)",
    )
    parser.add_argument("--limit-tokens", type=int, default=None, help="the first N tokens only")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="the store's embedder")
    parser.add_argument("--no-llama-index", action="store_true", help="skip llama-index's pass")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.limit_tokens = SMOKE_TOKENS
    return args


if __name__ == "__main__":
    raise SystemExit(main())
