"""What the sentence index costs at ingest, and what cheaper ways to a sentence signal give up.

The sentence index embeds every piece of every chunk (`index.sentence_pieces`) beside the
chunk itself: a second pass of the model over about as many tokens. This script measures, on
a real manual (`examples/manuals/NAME`), the process CPU seconds of the bundled model's
`encode`:

- over the chunks (200 cl100k tokens, `chunk_document`): what ingest costs without the index;
- over every piece with torch (today's sentence vectors), and through the kept ONNX export of
  the model quantised to int8 (ONNX Runtime's dynamic, per-channel quantisation), with the
  cosine of each int8 vector to its torch one;

and the dense retrieval of the chunks that hold each question's answer strings (recall at 5,
10 and 30, and the reciprocal rank of the first, averaged over a question's answers), a chunk
scored by its own vector, or by the best of its vector and its pieces' vectors (MaxP):

- `chunks`: chunk vectors alone;
- `chunks + every piece`: today's sentence vectors;
- `chunks + novel pieces 20%`: only the pieces whose words the rest of their chunk least
  shares (the idf-weighted share of a piece's words absent from the rest of its chunk), up to
  a fifth of the pieces' characters, which keeps a second pass under 0.3x of the chunks'; the
  share is set by the cost target, not tuned;
- `... 20% of each chunk`: the same rule within each chunk (its most novel piece at least), so
  that a chunk's choice is its own and no later document moves it;
- `chunks + the index's novel pieces`: what the sentence index embeds (`index.novel_pieces`):
  in each chunk, by the unweighted share of a piece's words the rest of the chunk lacks, up to
  a fifth of the chunk's characters, none where no piece fits or is new;
- `chunks + every piece in context`: each piece's vector the mean of the token embeddings it
  covers in its chunk's own pass (late chunking: no second pass);
- `... the novel ones alone (the index)`: what the sentence index keeps, the pieces in
  context but the novel ones embedded alone;
- `chunks + random pieces 20%`: the same share chosen at random, the control;
- `pooled from pieces`: no chunk pass, each chunk's vector the length-weighted mean of its
  pieces' vectors.

Run from the repository root (`make manuals` installs the pages), one manual at a time:

    .venv/bin/python benchmarks/sentence_signal.py python
    .venv/bin/python benchmarks/sentence_signal.py sqlite

`essays` instead of a manual measures what the sentence index is for: the 48 associative
needles of `evals.ASSOCIATIVE_NEEDLES` planted in the first `--essays-tokens` of the essays
(../shared/data), each asked by association (no content word shared), its chunk the answer:

    .venv/bin/python benchmarks/sentence_signal.py essays

`--smoke` runs the measurement code on three questions' pages with the hash embedder and no
ONNX Runtime step. Figures are printed and written to
`benchmarks/results/sentence-signal-NAME.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bench_common
import numpy as np
import numpy.typing as npt
from bench_common import (
    ESSAYS_JSON,
    REPO_ROOT,
    add_smoke_option,
    limit_tokens,
    load_corpus,
    need,
    write_results,
)

from windowpack import Document
from windowpack.config import cache_folder
from windowpack.documents import chunk_document
from windowpack.embed import InContextEmbedder, SentenceTransformerEmbedder, get_embedder
from windowpack.evals import ASSOCIATIVE_NEEDLES, load_manual, normalise_answer_text
from windowpack.index import novel_pieces, sentence_pieces
from windowpack.text import TokenCounter, get_token_counter, split_sentences

MANUALS = REPO_ROOT / "examples" / "manuals"
CHUNK_TOKENS = 200
NOVEL_SHARE = 0.2
"""The pieces' characters a subset may embed: 0.2 x ~1.4 (a piece pass costs ~1.4x the chunk
pass on the manuals, more texts and specials per token) keeps it under the 0.3x of issue 41."""
_WORD = re.compile(r"\w{3,}")
Matrix = npt.NDArray[np.float32]
Asked = tuple[str, tuple[str, ...]]
"""A question and the answer strings the chunks it needs hold."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "manual", nargs="?", default="python", help="a folder of examples/manuals, or 'essays'"
    )
    parser.add_argument(
        "--essays-tokens",
        type=int,
        default=300_000,
        help="with 'essays': the leading tokens of the essays the needles are planted in",
    )
    parser.add_argument("--no-int8", action="store_true", help="skip the ONNX int8 pass")
    add_smoke_option(parser)
    args = parser.parse_args()
    counter = get_token_counter("cl100k_base")
    if args.manual == "essays":
        tokens = bench_common.SMOKE_TOKENS * 4 if args.smoke else args.essays_tokens
        documents, questions = _essays_with_needles(counter, tokens)
    else:
        documents, questions = _manual(args.manual, smoke=args.smoke)
    counter = get_token_counter("cl100k_base")
    chunks = [
        document.text[chunk.start : chunk.end]
        for document in documents
        for chunk in chunk_document(document, counter, CHUNK_TOKENS)
    ]
    pieces_of = [[text[a:b] for a, b in sentence_pieces(text)] or [text] for text in chunks]
    pieces = [piece for found in pieces_of for piece in found]
    owner = np.repeat(np.arange(len(chunks)), [len(found) for found in pieces_of])
    print(f"{args.manual}: {len(documents)} documents, {len(chunks)} chunks, {len(pieces)} pieces")

    embedder = get_embedder("hash" if args.smoke else "all-MiniLM-L6-v2")
    chunk_vectors, chunk_cpu = _cpu_timed(lambda: embedder.embed(chunks))
    piece_vectors, piece_cpu = _cpu_timed(lambda: embedder.embed(pieces))
    question_vectors = np.stack(
        [embedder.embed_query(question).reshape(-1) for question, _ in questions]
    )
    figures: dict[str, Any] = {
        "manual": args.manual,
        "chunks": len(chunks),
        "pieces": len(pieces),
        "cpu_s": {"chunks": chunk_cpu, "pieces": piece_cpu},
    }
    if isinstance(embedder, SentenceTransformerEmbedder) and not args.no_int8:
        int8_vectors, int8_cpu = _int8_encoded(embedder, pieces)
        agreement = np.sum(int8_vectors * piece_vectors, axis=1)
        figures["cpu_s"]["pieces_onnx_int8"] = int8_cpu
        figures["int8_cosine"] = {
            "min": float(agreement.min()),
            "p1": float(np.percentile(agreement, 1)),
            "mean": float(agreement.mean()),
        }
    for name, seconds in figures["cpu_s"].items():
        print(f"cpu {name:18s} {seconds:8.1f} s  {seconds / max(chunk_cpu, 1e-9):5.2f}x the chunks")
    if "int8_cosine" in figures:
        print("int8 vs torch piece cosine: " + _line(figures["int8_cosine"]))

    wanted = {answer for _, answers in questions for answer in answers}
    # Normalised once: `answer_found` would normalise every text again for every answer.
    chunk_texts = [normalise_answer_text(text) for text in chunks]
    golds = [[_holding(chunk_texts, answer) for answer in answers] for _, answers in questions]
    golds = [[found for found in answers if found] for answers in golds]
    chunk_scores = question_vectors @ chunk_vectors.T
    piece_scores = question_vectors @ piece_vectors.T
    lengths = np.asarray([len(piece) for piece in pieces], dtype=np.float64)
    novelty = _novelty(chunks, pieces, owner)
    rng = np.random.default_rng(0)

    novel = _share(np.argsort(-novelty, kind="stable"), lengths)
    per_chunk = _share_per_chunk(novelty, owner, lengths)
    indexed = _indexed(chunks, pieces_of)

    def with_pieces(chosen: npt.NDArray[np.bool_], scores: Matrix = piece_scores) -> Matrix:
        best = chunk_scores.copy()
        for row in range(len(questions)):
            np.maximum.at(best[row], owner[chosen], scores[row][chosen])
        return best

    # What the sentence index keeps: every piece from its chunk's own pass, the novel ones
    # embedded alone instead.
    spans = [sentence_pieces(text) or [(0, len(text))] for text in chunks]
    assert isinstance(embedder, InContextEmbedder)  # the bundled model and the hash embedder
    in_context, figures["cpu_s"]["chunks_in_context"] = _cpu_timed(
        lambda: np.concatenate(embedder.embed_in_context(chunks, spans)[1])
    )
    print(f"cpu chunks in context  {figures['cpu_s']['chunks_in_context']:8.1f} s")
    late_scores = question_vectors @ in_context.T
    kept_scores = np.where(indexed[None, :], piece_scores, late_scores)
    every = np.ones(len(pieces), dtype=bool)

    variants = {
        "chunks": chunk_scores,
        "chunks + every piece": with_pieces(np.ones(len(pieces), dtype=bool)),
        f"chunks + novel pieces {NOVEL_SHARE:.0%}": with_pieces(novel),
        f"... {NOVEL_SHARE:.0%} of each chunk": with_pieces(per_chunk),
        "chunks + the index's novel pieces": with_pieces(indexed),
        "chunks + every piece in context": with_pieces(every, late_scores),
        "... the novel ones alone (the index)": with_pieces(every, kept_scores),
        f"chunks + random pieces {NOVEL_SHARE:.0%}": with_pieces(
            _share(rng.permutation(len(pieces)), lengths)
        ),
        "pooled from pieces": question_vectors @ _pooled(piece_vectors, owner, lengths).T,
    }
    figures["retrieval"] = {name: _retrieval(scores, golds) for name, scores in variants.items()}
    wanted_texts = [text for text in map(normalise_answer_text, wanted) if text]
    holding = np.asarray(
        [any(a in normalise_answer_text(piece) for a in wanted_texts) for piece in pieces]
    )
    subsets = (
        ("novel share", novel),
        ("each chunk's novel share", per_chunk),
        ("the index's novel pieces", indexed),
    )
    for label, subset in subsets:
        chars = float(lengths[subset].sum() / lengths.sum())
        found = int((holding & subset).sum())
        figures[f"{label}: answer pieces, characters"] = [found, int(holding.sum()), chars]
        print(
            f"{label}: {chars:.1%} of the pieces' characters, "
            f"{found} of the {int(holding.sum())} pieces holding an answer"
        )
    answered = sum(1 for found in golds if found)
    print(f"dense retrieval of the answer chunks, {answered} of {len(questions)} questions:")
    for name, row in figures["retrieval"].items():
        print(f"  {name:28s} {_line(row)}")
    path = write_results(f"sentence-signal-{args.manual}", figures)
    print(f"Figures written to {path}")


def _manual(name: str, *, smoke: bool) -> tuple[list[Document], list[Asked]]:
    """A manual's pages and questions (a smoke run: three questions over their own pages)."""
    folder = MANUALS / name
    corpus = Path(json.loads((folder / "manual.json").read_text())["corpus"])
    need([corpus], what=f"the pages of {name} (make manuals)")
    docs = load_manual(folder, max_bytes=10**9)
    questions = docs.questions[:3] if smoke else docs.questions
    pages = {page for question in questions for page in question.pages}
    documents = [d for d in docs.documents if d.id in pages] if smoke else list(docs.documents)
    return documents, [(question.question, question.answers) for question in questions]


def _essays_with_needles(counter: TokenCounter, tokens: int) -> tuple[list[Document], list[Asked]]:
    """The leading `tokens` of the essays with every associative needle planted after a
    seeded sentence of a seeded essay; each asked by association, its answer the character."""
    need([ESSAYS_JSON])
    documents = limit_tokens(load_corpus([ESSAYS_JSON], max_bytes=10**9).documents, counter, tokens)
    rng = random.Random(0)
    planted: dict[int, list[tuple[int, str]]] = {}
    for needle in ASSOCIATIVE_NEEDLES:
        row = rng.randrange(len(documents))
        ends = [span.end for span in split_sentences(documents[row].text)]
        planted.setdefault(row, []).append((rng.choice(ends), needle.needle))
    for row, inserts in planted.items():
        text = documents[row].text
        for at, sentence in sorted(inserts, reverse=True):
            text = f"{text[:at]} {sentence}{text[at:]}"
        documents[row] = dataclasses.replace(documents[row], text=text)
    return documents, [(needle.question, (needle.answer,)) for needle in ASSOCIATIVE_NEEDLES]


def _cpu_timed(call: Callable[[], Matrix]) -> tuple[Matrix, float]:
    started = time.process_time()
    result = call()
    return result, time.process_time() - started


def _int8_encoded(
    embedder: SentenceTransformerEmbedder, texts: Sequence[str]
) -> tuple[Matrix, float]:
    """`texts` through the kept ONNX export quantised to int8, batched by length as
    sentence-transformers batches them; the process CPU seconds of the batches."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    embedder.embed_query("export the question model if none is kept")
    graphs = sorted(cache_folder("query-models").glob("*.onnx"), key=lambda p: p.stat().st_mtime)
    tokenizer = embedder.model.tokenizer
    with tempfile.TemporaryDirectory() as folder:
        quantised = Path(folder, "int8.onnx")
        quantize_dynamic(graphs[-1], quantised, weight_type=QuantType.QInt8, per_channel=True)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(str(quantised), options)
    inputs = [node.name for node in session.get_inputs()]
    order = np.argsort([len(text) for text in texts], kind="stable")
    vectors = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    started = time.process_time()
    for low in range(0, len(texts), 32):
        rows = order[low : low + 32]
        features = tokenizer(
            [texts[row] for row in rows], padding=True, truncation=True, return_tensors="np"
        )
        pooled = session.run(None, {name: features[name].astype(np.int64) for name in inputs})[0]
        vectors[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return vectors, time.process_time() - started


def _holding(normalised_chunks: Sequence[str], answer: str) -> set[int]:
    """The chunks (their texts normalised as `evals.answer_found` does) holding `answer`."""
    wanted = normalise_answer_text(answer)
    return {row for row, text in enumerate(normalised_chunks) if wanted and wanted in text}


def _novelty(
    chunks: Sequence[str], pieces: Sequence[str], owner: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """Per piece, the idf-weighted share of its words that the rest of its chunk lacks."""
    frequency: dict[str, int] = {}
    for text in chunks:
        for word in set(_WORD.findall(text.lower())):
            frequency[word] = frequency.get(word, 0) + 1
    scores = np.zeros(len(pieces))
    for row, (piece, chunk) in enumerate(zip(pieces, owner, strict=True)):
        words = set(_WORD.findall(piece.lower()))
        rest = set(_WORD.findall(chunks[chunk].lower().replace(piece.lower(), " ")))
        weights = {word: math.log(len(chunks) / frequency.get(word, 1)) for word in words}
        total = sum(weights.values())
        scores[row] = (
            sum(w for word, w in weights.items() if word not in rest) / total if total else 0.0
        )
    return scores


def _share(order: npt.NDArray[np.intp], lengths: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """The pieces first in `order` up to `NOVEL_SHARE` of all the pieces' characters."""
    chosen = np.zeros(len(lengths), dtype=bool)
    chosen[order[np.cumsum(lengths[order]) <= NOVEL_SHARE * lengths.sum()]] = True
    return chosen


def _share_per_chunk(
    novelty: npt.NDArray[np.float64], owner: npt.NDArray[np.intp], lengths: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """In each chunk, its most novel piece and the next most novel ones while they stay within
    `NOVEL_SHARE` of the chunk's pieces' characters: a choice that no other chunk moves."""
    chosen = np.zeros(len(owner), dtype=bool)
    for chunk in np.unique(owner):
        rows = np.flatnonzero(owner == chunk)
        ranked = rows[np.argsort(-novelty[rows], kind="stable")]
        within = np.cumsum(lengths[ranked]) <= NOVEL_SHARE * lengths[rows].sum()
        within[0] = True
        chosen[ranked[within]] = True
    return chosen


def _indexed(chunks: Sequence[str], pieces_of: Sequence[Sequence[str]]) -> npt.NDArray[np.bool_]:
    """The pieces the sentence index embeds (`index.novel_pieces`), as a mask over them all."""
    chosen: list[bool] = []
    for text, found in zip(chunks, pieces_of, strict=True):
        ordinals = {ordinal for ordinal, _ in novel_pieces(text)}
        chosen.extend(ordinal in ordinals for ordinal in range(len(found)))
    return np.asarray(chosen, dtype=bool)


def _pooled(
    vectors: Matrix, owner: npt.NDArray[np.intp], lengths: npt.NDArray[np.float64]
) -> Matrix:
    pooled = np.zeros((int(owner.max()) + 1, vectors.shape[1]), dtype=np.float64)
    np.add.at(pooled, owner, vectors * lengths[:, None])
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.asarray(pooled / np.where(norms == 0, 1, norms), dtype=np.float32)


def _retrieval(scores: Matrix, golds: Sequence[Sequence[set[int]]]) -> dict[str, float]:
    recall: dict[int, list[float]] = {5: [], 10: [], 30: []}
    reciprocal: list[float] = []
    for row, answers in enumerate(golds):
        if not answers:
            continue
        rank = np.empty(scores.shape[1], dtype=np.intp)
        rank[np.argsort(-scores[row], kind="stable")] = np.arange(scores.shape[1])
        firsts = [int(rank[list(chunks)].min()) for chunks in answers]
        for k, found in recall.items():
            found.append(float(np.mean([first < k for first in firsts])))
        reciprocal.append(float(np.mean([1 / (1 + first) for first in firsts])))
    figures = {f"recall@{k}": float(np.mean(found)) for k, found in recall.items()}
    return {**figures, "mrr": float(np.mean(reciprocal))}


def _line(row: dict[str, float]) -> str:
    return "  ".join(f"{name} {value:.3f}" for name, value in row.items())


if __name__ == "__main__":
    main()
