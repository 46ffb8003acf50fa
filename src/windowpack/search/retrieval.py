"""Question -> ranked evidence: the one ranking `search` and `pack` share.

1. *Candidates.* Each collection's indexes are asked once, to the same depth: BM25 over the
   question's terms (`Question.terms`), the chunk vectors, and the sentence vectors (a
   chunk scored by its best sentence). Every collection's lists are merged: cosines from one model,
   and BM25 scores, share a scale across collections.
2. *Fusion* of the lists (`fuse`): z-scores with a weight per list, each list standardised
   by its leading scores, so the order of the leading candidates does not depend on how
   deep each list was read: a search for 10 hits and a pack of 128K tokens rank their common
   head alike. The lists are one-sided where the embedding model was trained on the
   collection's language (`_model_reads`): each counts only for the units it ranks above its
   mean, so a unit one of them alone finds can lead.
3. *Feedback* (`feedback_terms`, the second hop). The leading evidence names what the
   question does not: the setting a paragraph says controls a behaviour, the command a
   page points to. Pseudo-relevance feedback (RM3: Lavrenko and Croft 2001; Abdul-Jaleel
   et al. 2004) takes the terms of the best `FEEDBACK_DOCUMENTS` candidates, weighted by
   their frequency there and their inverse document frequency, and runs BM25 again with the
   question's terms and the best `FEEDBACK_TERMS` of them; that ranking joins the fusion.
   No word list and no grammar: it works in any language the index has rules for.
4. *Literals win* (`_literals_first`). When the question names literals (`--flag`,
   `module.function`, `max_connections`, a quoted string), a unit holding more of them
   word for word ranks above one holding fewer, whatever the fusion said: a passage naming
   the option asked about is evidence no paraphrase can stand in for. Units are matched
   through the BM25 index's postings (a literal is a term of its own, `text.language`); a
   quoted phrase, in the leading `_PHRASE_DEPTH` candidates' texts.

The weights (`config.EvidenceSettings`) and constants below were set on the development
manuals (`examples/manuals`: the Debian handbook, PostgreSQL's, Python's and SQLite's;
Git's kept aside), as docs/evidence.md reports.

`Evidence` is the result: the fused ranking (index ids of chunks and summary nodes, best
first), the lists it came from (what found each unit: `pack.reasons`), the units the
feedback raised, and the question as read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from windowpack.config import EvidenceSettings
from windowpack.embed import Vectors
from windowpack.index import PIECES_PER_CHUNK, CollectionIndexes, best_per_chunk, is_node_index_id
from windowpack.search.question import Question
from windowpack.text import language_rules

Ids = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]
Ranked = tuple[Ids, Scores]
TextsOf = Callable[[Sequence[int]], list[str]]
"""The texts of some chunks, by index id (what feedback reads)."""

STATS_DEPTH = 512
"""How many of each list's leading scores its standardisation reads (`fuse`): the depth
every search and pack reads at least (`hybrid.MIN_CANDIDATES`)."""
FEEDBACK_DOCUMENTS = 5
"""Leading candidates whose terms feedback reads: RM3's usual 5-10 (Lin's Anserini default
is 10 over whole documents; chunks are a few sentences, and fewer keep the drift small)."""
FEEDBACK_TERMS = 10
"""Expansion terms added to the question: Anserini's RM3 default."""
FEEDBACK_QUERY_WEIGHT = 0.5
"""The question's own share of the expanded query (RM3's original-query weight, Anserini's
default 0.5)."""
# Leading candidates whose texts a quoted phrase is looked for in: a bound on the texts one
# question reads, not tuned (no development question quotes a phrase).
_PHRASE_DEPTH = 200


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What retrieval found for one question (see module)."""

    question: Question
    ids: Ids
    """Index ids of chunks and summary nodes, best first."""
    scores: Scores
    """Their fused scores (weighted z-scores, `fuse`), descending."""
    words: tuple[Ranked, ...] = ()
    """The lists that matched the question's words: BM25."""
    meaning: tuple[Ranked, ...] = ()
    """The lists that matched its meaning: chunk vectors, sentence vectors."""
    linked: Ids = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Units the feedback ranking found (at or above its mean), sorted."""
    stages: tuple[str, ...] = ()

    def describe(self) -> dict[str, object]:
        """The question as read and the stages run: what a window records."""
        return {**self.question.describe(), "stages": list(self.stages)}


def read_question(text: str, sources: Sequence[CollectionIndexes]) -> Question:
    """`text` read by the language rules of the first source's lexical index (English's
    before it holds anything)."""
    language = sources[0].lexical.language if sources else None
    return Question.of(text, language_rules(language or "en"))


def retrieve(
    question: Question,
    sources: Sequence[CollectionIndexes],
    vector_of: Callable[[], Vectors],
    *,
    depth: int,
    settings: EvidenceSettings,
    texts_of: TextsOf,
    model_languages: frozenset[str] | None = None,
) -> Evidence:
    """The evidence for `question` over `sources` (see module). `vector_of` gives the
    question's vector (embedded meanwhile: the lexical look-ups run first); `depth` is how
    many candidates each list is read to; `model_languages`, the languages the embedding
    model was trained on (None: not known, taken to be any)."""
    one_sided = settings.one_sided and _model_reads(model_languages, sources)
    stages = ["bm25"]
    words = _merged([s.lexical.search_terms(question.terms, depth, within=s.kept) for s in sources])
    vector = vector_of()
    dense = _merged([s.dense.search(vector, depth, within=s.kept) for s in sources])
    meaning = [dense]
    weights = [settings.lexical_weight, 1.0]
    lists = [words, dense]
    stages.append("chunk vectors")
    if settings.sentences and any(s.sentences is not None for s in sources):
        pieces = _merged(
            [
                s.sentences.search_pieces(vector, depth * PIECES_PER_CHUNK, within=s.kept)
                for s in sources
                if s.sentences is not None
            ]
        )
        by_chunk = best_per_chunk(pieces[0], pieces[1].astype(np.float32), depth)
        lists.append((by_chunk[0], by_chunk[1].astype(np.float64)))
        meaning.append(lists[-1])
        weights.append(settings.sentence_weight)
        stages.append("sentence vectors")
    ids, scores = fuse(lists, weights, one_sided=one_sided)
    linked = np.zeros(0, dtype=np.int64)
    if settings.second_hop and len(ids):
        hop = _feedback_list(question, sources, ids, texts_of, depth)
        if len(hop[0]):
            ids, scores = fuse(
                [*lists, hop], [*weights, settings.feedback_weight], one_sided=one_sided
            )
            # What the hop found: its list at or above its mean (as `pack.reasons` reads a
            # list); a unit the question's own lists found too is said to be found by them.
            linked = np.sort(hop[0][hop[1] >= hop[1].mean()])
            stages.append("feedback")
    if settings.literals and question.literals and len(ids):
        ids, scores = _literals_first(question, sources, ids, scores, texts_of, depth)
        stages.append("literals")
    stages.append("one-sided fusion" if one_sided else "two-sided fusion")
    return Evidence(
        question=question,
        ids=ids,
        scores=scores,
        words=(words,),
        meaning=tuple(meaning),
        linked=linked,
        stages=tuple(stages),
    )


def _model_reads(
    model_languages: frozenset[str] | None, sources: Sequence[CollectionIndexes]
) -> bool:
    """Whether the embedding model was trained on the language of every source's texts (as
    their lexical index detected or was told it): its vector lists are then trusted to raise
    a unit alone (`fuse(one_sided=True)`). An English model's cosines over German text, say,
    put unrelated units far above their mean; two-sided fusion holds such a unit back unless
    BM25 ranks it too."""
    if model_languages is None:
        return True
    return all(s.lexical.language in (None, *model_languages) for s in sources)


def fuse(
    lists: Sequence[Ranked],
    weights: Sequence[float],
    *,
    head: int = STATS_DEPTH,
    one_sided: bool = False,
) -> Ranked:
    """Weighted z-score fusion, best first (ties by smaller id): each list's scores are
    standardised by the mean and spread of its leading `head` scores, weighted, and summed;
    a unit a list did not return gets that list's lowest standardised score. A list whose
    leading scores are all equal carries membership only (`_membership_z`). A list of weight
    0, or empty, is left out.

    `one_sided`: each list counts only *for* a unit, by how far it ranks it above the list's
    mean (its z-scores clipped at 0), never against one it ranks low or did not return. A
    unit one list alone finds far above its mean then outranks units every list puts near
    their means; two-sided, every list holds back a unit it ranks low (see `retrieve` for
    when each is used).

    Why scores and not ranks (reciprocal rank fusion): a BM25 hit that outscores everything
    else by far (a rare term, an exact option) keeps that margin instead of counting as a
    near tie. On the development manuals z-scores led RRF at 2K tokens (docs/evidence.md).
    Why the leading scores' statistics: a unit every list returns within `head` gets the same
    fused score however deep the lists were read, so a search for 10 hits and a pack of a
    large budget rank their common head alike."""
    kept = [
        (ids, scores.astype(np.float64), weight)
        for (ids, scores), weight in zip(lists, weights, strict=True)
        if len(ids) and weight
    ]
    if not kept:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    everyone = np.unique(np.concatenate([ids for ids, _, _ in kept]).astype(np.int64))
    totals = np.zeros(len(everyone), dtype=np.float64)
    for ids, scores, weight in kept:
        leading = scores[:head]
        spread = float(leading.std())
        if spread > 0:
            z_scores = (scores - float(leading.mean())) / spread
            floor = float(z_scores.min())
        else:
            member, floor = _membership_z(len(scores), len(everyone))
            z_scores = np.full(len(scores), member)
        if one_sided:
            z_scores, floor = np.maximum(z_scores, 0.0), max(floor, 0.0)
        column = np.full(len(everyone), floor)
        column[np.searchsorted(everyone, ids)] = z_scores
        totals += weight * column
    order = np.lexsort((everyone, -totals))
    return everyone[order], totals[order]


def _membership_z(members: int, candidates: int) -> tuple[float, float]:
    """z-scores of members and of the others when `members` of `candidates` score one value
    and the rest another, lower: sqrt((1 - p) / p) and -sqrt(p / (1 - p)), p the members'
    share (a list of one hit, above all: the chunk holding a rare term must not lose to the
    other lists' top hits). All candidates members: no ranking at all (1 and 0)."""
    if members >= candidates:
        return 1.0, 0.0
    share = members / candidates
    return float(np.sqrt((1 - share) / share)), float(-np.sqrt(share / (1 - share)))


def feedback_terms(
    question: Question,
    documents: Sequence[Mapping[str, int]],
    idf: Callable[[list[str]], Scores],
) -> list[tuple[str, float]]:
    """RM3's expansion terms: over `documents` (each a leading candidate's terms with their
    counts, best first, weighted by 1 / rank), each term not in the question weighs the sum
    of its relative frequency in each document times that document's weight, times its idf;
    the best `FEEDBACK_TERMS`, weights normalised to sum 1."""
    asked = set(question.terms) | set(question.literals)
    weights: dict[str, float] = {}
    for rank, counts in enumerate(documents, start=1):
        length = sum(counts.values())
        if not length:
            continue
        for term, count in counts.items():
            if term not in asked:
                weights[term] = weights.get(term, 0.0) + count / length / rank
    if not weights:
        return []
    candidates = list(weights)
    scored = {
        term: weights[term] * float(value)
        for term, value in zip(candidates, idf(candidates), strict=True)
    }
    best = sorted((t for t in scored if scored[t] > 0), key=lambda t: (-scored[t], t))[
        :FEEDBACK_TERMS
    ]
    total = sum(scored[t] for t in best)
    return [(term, scored[term] / total) for term in best] if total > 0 else []


def _feedback_list(
    question: Question,
    sources: Sequence[CollectionIndexes],
    ranked: Ids,
    texts_of: TextsOf,
    depth: int,
) -> Ranked:
    """BM25 over the question's terms and the feedback terms of the leading chunks."""
    leaders = [int(i) for i in ranked[: FEEDBACK_DOCUMENTS * 2] if not is_node_index_id(int(i))]
    leaders = leaders[:FEEDBACK_DOCUMENTS]
    if not leaders:
        return _empty()
    lexical = sources[0].lexical
    # The leaders' terms as the index holds them; their texts cut again where it cannot say
    # (a leader of another collection's index, an index of sentence rows).
    documents: Sequence[Mapping[str, int]] | None = lexical.term_counts(leaders)
    if documents is None:
        documents = [Counter(lexical.terms(text)) for text in texts_of(leaders)]
    expansion = feedback_terms(question, documents, lexical.idf)
    if not expansion:
        return _empty()
    asked = list(question.terms)
    own = FEEDBACK_QUERY_WEIGHT / max(1, len(asked))
    terms = [*asked, *(term for term, _ in expansion)]
    weights = [own] * len(asked) + [(1 - FEEDBACK_QUERY_WEIGHT) * w for _, w in expansion]
    return _merged(
        [s.lexical.search_terms(terms, depth, weights=weights, within=s.kept) for s in sources]
    )


def _literals_first(
    question: Question,
    sources: Sequence[CollectionIndexes],
    ids: Ids,
    scores: Scores,
    texts_of: TextsOf,
    depth: int,
) -> Ranked:
    """The ranking with units holding more of the question's literals first, each literal
    weighted by its inverse document frequency (fused order among equals; the fused scores
    handed out again in that order).

    A literal that is one term of the index (an option, an identifier, a word) is looked up
    in the postings, to `depth` units, so that a unit naming it counts even when the fusion
    ranked it below the candidates read; a literal of several terms (a quoted phrase) is
    looked for in the leading candidates' texts."""
    held: dict[int, float] = {}
    phrases: list[tuple[str, float]] = []
    lexical = sources[0].lexical
    for literal in question.literals:
        own = lexical.terms(literal)
        # A literal weighs what its rarest term does: naming a rare option outweighs naming
        # the product the whole manual is about.
        weight = float(lexical.idf(own).max()) if own else 0.0
        if weight <= 0:
            continue
        term = literal if literal in own else (own[0] if len(own) == 1 else None)
        if term is None:
            phrases.append((literal, weight))
            continue
        found = _merged([s.lexical.search_terms([term], depth, within=s.kept) for s in sources])
        for unit in found[0].tolist():
            held[unit] = held.get(unit, 0.0) + weight
    if phrases:
        leading = [int(i) for i in ids[:_PHRASE_DEPTH] if not is_node_index_id(int(i))]
        for unit, text in zip(leading, texts_of(leading), strict=True):
            lowered = text.lower()
            weight = sum(w for phrase, w in phrases if phrase in lowered)
            if weight:
                held[unit] = held.get(unit, 0.0) + weight
    if not held:
        return ids, scores
    missing = np.asarray(sorted(set(held) - set(ids.tolist())), dtype=np.int64)
    floor = float(scores[-1]) if len(scores) else 0.0
    ids = np.concatenate([ids, missing])
    scores = np.concatenate([scores, np.full(len(missing), floor)])
    weights = np.asarray([held.get(int(i), 0.0) for i in ids.tolist()], dtype=np.float64)
    order = np.lexsort((ids, -scores, -weights))
    # The same scores, handed out in the new order: only the order changes.
    return ids[order], np.sort(scores)[::-1]


def _merged(results: Sequence[tuple[npt.NDArray[np.int64], npt.NDArray[np.floating]]]) -> Ranked:
    """Several collections' lists as one, best first (ties by smaller id)."""
    results = [r for r in results if len(r[0])]
    if not results:
        return _empty()
    ids = np.concatenate([ids for ids, _ in results]).astype(np.int64)
    scores = np.concatenate([scores for _, scores in results]).astype(np.float64)
    if len(results) > 1:
        order = np.lexsort((ids, -scores))
        ids, scores = ids[order], scores[order]
    return ids, scores


def _empty() -> Ranked:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
