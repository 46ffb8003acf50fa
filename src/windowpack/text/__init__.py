"""The ground floor every component stands on: exact token counts, content hashes, sentences.

Pure functions over strings, no database and no models: `tokens` (offline tiktoken,
Hugging Face tokenizers and GGUF vocabularies, which `gguf` opens with llama.cpp),
`hashing` (the cache key of every derived artefact) and `sentences` (the one sentence
splitter the chunker, BM25 and the summarizer share), `stop_words` (bm25s's stop word
lists, without importing bm25s), `language` (a language's rules for lexical matching, and
which language a text is in) and `untrusted_json` (JSON from outside the process, read with
limits on size, depth and text).
"""

from __future__ import annotations

from windowpack.text import storable
from windowpack.text.files import write_atomically
from windowpack.text.gguf import load_llama
from windowpack.text.hashing import content_hash
from windowpack.text.language import (
    LANGUAGES,
    PLAIN,
    LanguageRules,
    detect_language,
    language_rules,
)
from windowpack.text.sentences import append_trimmed, split_sentences
from windowpack.text.stop_words import bm25s_stop_words
from windowpack.text.tokens import TIKTOKEN_ENCODINGS, TokenCounter, get_token_counter
from windowpack.text.untrusted_json import load_untrusted_json

__all__ = [
    "LANGUAGES",
    "PLAIN",
    "TIKTOKEN_ENCODINGS",
    "LanguageRules",
    "TokenCounter",
    "append_trimmed",
    "bm25s_stop_words",
    "content_hash",
    "detect_language",
    "get_token_counter",
    "language_rules",
    "load_llama",
    "load_untrusted_json",
    "split_sentences",
    "storable",
    "write_atomically",
]
