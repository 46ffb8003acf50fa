"""The `tokenizers` library over the kept tokenizer gives a question the features that
`SentenceTransformer.preprocess` gives it (ids, attention mask, token types, truncation at
the model's length), and cuts a long one into the windows `embed` cuts."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from windowpack.embed.embedder import SentenceTransformerEmbedder, get_embedder
from windowpack.embed.query_tokenizer import QueryTokenizer

pytestmark = pytest.mark.model

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ODD_TEXTS = (
    "",
    " ",
    "\n\t  \r\n",
    "tapirs",
    "  leading and trailing spaces  ",
    "Ünïcödé naïve café façade Ångström",
    "straße ﬁnance ﬂow Ⅻ ½ ² ㎏",  # compatibility forms the normaliser may fold
    "e\u0301 a\u0308 combining marks",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "東京で寿司を食べました。北京欢迎你。서울",
    "مرحبا بالعالم שלום עולם",
    "emoji 🦛🏳️‍🌈👩‍👩‍👧 and skin 👍🏽",
    "control \x00 \x07 \x1b[31m chars",
    "math \U0001d538\U0001d553\U0001d554 ∑∫∂ ≠ ≤",  # double-struck letters
    "URLs https://example.com/a_b?c=1&d=2 and e-mail a.b@c.io",
    "numbers 1,234,567.89 3.14159 -42 1e-9 0x1F",
    "CamelCaseWordsAndSnake_case_words and ALLCAPS",
    *(LONG_TEXTS := ("antidisestablishmentarianism " * 300, "東京" * 400, "🦛, " * 300)),
    "x" * 5000,  # one word too long for a word piece: [UNK]
    "a b " * 254,  # about the model's length, either side of the cut
    "a b " * 127 + "c",
)


@pytest.fixture(scope="module")
def embedder() -> Iterator[SentenceTransformerEmbedder]:
    model = get_embedder()
    assert isinstance(model, SentenceTransformerEmbedder)
    yield model


@pytest.fixture(scope="module")
def tokenizer(embedder: SentenceTransformerEmbedder) -> QueryTokenizer:
    model = embedder._loaded()
    return QueryTokenizer(
        model.tokenizer.backend_tokenizer.to_str(),
        max_length=int(model.max_seq_length),
        inputs=INPUTS,
    )


def _assert_same_features(
    embedder: SentenceTransformerEmbedder, tokenizer: QueryTokenizer, text: str
) -> None:
    expected = embedder._loaded().preprocess([text])
    found = tokenizer.features(text)
    for name in INPUTS:
        assert found[name].dtype == np.int64
        np.testing.assert_array_equal(found[name], expected[name].numpy(), err_msg=name)


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_odd_and_long_texts_get_the_models_features(
    embedder: SentenceTransformerEmbedder, tokenizer: QueryTokenizer, text: str
) -> None:
    _assert_same_features(embedder, tokenizer, text)


def test_a_long_text_is_cut_at_the_models_length(tokenizer: QueryTokenizer) -> None:
    assert tokenizer.features("tapir " * 1000)["input_ids"].shape == (1, 256)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=400))
def test_any_text_gets_the_models_features(
    embedder: SentenceTransformerEmbedder, tokenizer: QueryTokenizer, text: str
) -> None:
    _assert_same_features(embedder, tokenizer, text)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    words=st.lists(
        st.one_of(
            st.sampled_from(["tapir", "1,234", "naïve", "東京", "🦛", "—", "don't", "x" * 30]),
            st.text(min_size=1, max_size=12),
        ),
        min_size=1,
        max_size=900,
    )
)
def test_sentences_of_any_length_get_the_models_features(
    embedder: SentenceTransformerEmbedder, tokenizer: QueryTokenizer, words: list[str]
) -> None:
    _assert_same_features(embedder, tokenizer, " ".join(words))


@pytest.mark.parametrize("text", LONG_TEXTS)
def test_a_long_text_is_cut_into_the_windows_that_embed_cuts(
    embedder: SentenceTransformerEmbedder, tokenizer: QueryTokenizer, text: str
) -> None:
    pieces, owners = embedder._split_into_windows([text])
    assert len(pieces) > 1 and set(owners.tolist()) == {0}
    assert tokenizer.windows(text) == pieces
