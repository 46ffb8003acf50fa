"""LLMSummarizer against a real HTTP server that speaks the OpenAI chat-completions API.

The server is a local fake (no model): its reply is the first sentence of each numbered
passage of the prompt it got, so a test can see that the passages reached it. It can be told
to fail, to be slow, or to ramble, and it counts how many requests it serves at once. The
client is the real `llama-index-llms-openai-like` one, over real sockets.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("llama_index.core")
OpenAILike = pytest.importorskip("llama_index.llms.openai_like").OpenAILike

from windowpack.errors import (  # noqa: E402
    InvalidArgumentError,
    MissingDependencyError,
    WindowpackError,
)
from windowpack.summarizer.base import Summarizer, SummaryFailure  # noqa: E402
from windowpack.summarizer.llm import (  # noqa: E402
    PROMPT_TEMPLATE,
    CostEstimate,
    LLMSummarizer,
    fit_to_tokens,
    max_words,
)
from windowpack.text.tokens import TokenCounter, get_token_counter  # noqa: E402

PASSAGE_LINE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
FIRST_SENTENCE = re.compile(r".*?[.!?](?=\s|$)")
# Bounds that only catch a hang: a call under test never comes near them, however loaded the
# machine (a 5 s client timeout once fired at load 9, and the retry broke the test).
HANG_S = 300.0
# A server delay that outlasts any test: the request is woken when the server stops.
FOREVER_S = 10 * HANG_S

CHILDREN = [
    "Ada Lovelace published her notes on the Analytical Engine in 1843. They ran long.",
    "Charles Babbage designed the engine but never finished it. Funding was the problem.",
    "The notes include 'Note G', an algorithm for Bernoulli numbers. It is often cited.",
]
FIRST_SENTENCES = [FIRST_SENTENCE.match(text).group(0) for text in CHILDREN]  # type: ignore[union-attr]


class FakeOpenAIServer(ThreadingHTTPServer):
    """Serves POST /v1/chat/completions and /v1/completions; see the module docstring."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.prompts: list[str] = []
        self.fail_next = 0  # answer HTTP 500 to this many more requests
        self.fail_if_contains: str | None = None  # answer 500 to every prompt holding this
        self.delays: list[float] = []  # the delays of the next requests, one each
        self.delay_s = 0.0  # the delay of every request once `delays` is used up
        # Requests wait until this many are in flight at once (then none waits again), so
        # that a test of concurrency does not depend on how fast the callers' threads start.
        self.gather = 0
        self.gathered = threading.Condition(self.lock)
        self.repeat = 1  # the reply is the echo repeated this many times
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def reply_to(self, prompt: str) -> tuple[int, str]:
        """(HTTP status, reply text) for one prompt, after any delay it was told to add."""
        with self.lock:
            self.prompts.append(prompt)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fail = self.fail_next > 0 or (
                self.fail_if_contains is not None and self.fail_if_contains in prompt
            )
            self.fail_next = max(0, self.fail_next - 1)
            delay = self.delays.pop(0) if self.delays else self.delay_s
            if self.in_flight >= self.gather:
                self.gather = 0
                self.gathered.notify_all()
            # A bound that only catches a hang: the callers come whatever the machine's load.
            assert self.gathered.wait_for(lambda: self.gather == 0, timeout=HANG_S)
        try:
            self.stopping.wait(delay)
            if fail:
                return 500, "the fake server was told to fail"
            passages = [m.group(2) for m in PASSAGE_LINE.finditer(prompt)]
            sentences = [m.group(0) for p in passages if (m := FIRST_SENTENCE.match(p))]
            return 200, " ".join(sentences * self.repeat)
        finally:
            with self.lock:
                self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAIServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if self.path.endswith("/chat/completions"):
            prompt = "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        elif self.path.endswith("/completions"):
            prompt = str(body["prompt"])
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        status, text = self.server.reply_to(prompt)
        if status != 200:
            self._send(status, {"error": {"message": text, "type": "server_error"}})
        elif self.path.endswith("/chat/completions"):
            choice = {"index": 0, "message": {"role": "assistant", "content": text}}
            self._send(200, _response("chat.completion", choice | {"finish_reason": "stop"}))
        else:
            choice = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
            self._send(200, _response("text_completion", choice))

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


def _response(kind: str, choice: dict[str, Any]) -> dict[str, Any]:
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return {"id": "fake-1", "object": kind, "created": 0, "model": "fake", "choices": [choice],
            "usage": usage}  # fmt: skip


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    fake = FakeOpenAIServer()
    thread = threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()  # wakes any request still sleeping
        fake.shutdown()
        fake.server_close()
        thread.join(timeout=5)


def _llm(server: FakeOpenAIServer, *, client_timeout: float = HANG_S) -> Any:
    return OpenAILike(
        model="fake",
        api_base=server.base_url,
        api_key="x",
        is_chat_model=True,
        timeout=client_timeout,
        max_retries=0,
    )


def _fast(server: FakeOpenAIServer, *, attempts: int = 3) -> LLMSummarizer:
    """A summarizer with short backoffs, and a timeout no test reaches."""
    return LLMSummarizer(_llm(server), attempts=attempts, backoff_s=0.01, timeout_s=HANG_S)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return get_token_counter("cl100k_base")


def test_the_summary_comes_from_the_server_which_got_the_prompt_and_passages(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    summarizer = _fast(server)

    summary = summarizer.summarize(CHILDREN, target_tokens=100, counter=counter)

    assert summary == " ".join(FIRST_SENTENCES)
    assert server.prompts == [summarizer.build_prompt(CHILDREN, 100)]
    prompt = server.prompts[0]
    positions = [prompt.index(f"[{i}] {text}") for i, text in enumerate(CHILDREN, 1)]
    assert positions == sorted(positions)  # every passage, in order
    assert f"at most {max_words(100)} words" in prompt
    assert max_words(100) == 75
    assert "no preamble" in prompt
    assert "exactly" in prompt


def test_it_is_a_summarizer_with_an_id_naming_the_model_and_the_prompt(
    server: FakeOpenAIServer,
) -> None:
    summarizer = _fast(server)
    template_hash = hashlib.sha256(PROMPT_TEMPLATE.encode()).hexdigest()[:8]

    assert isinstance(summarizer, Summarizer)
    assert summarizer.summarizer_id == f"llm-fake-{template_hash}"
    other = LLMSummarizer(_llm(server), prompt_template="Briefly ({max_words} words):\n{passages}")
    assert other.summarizer_id.startswith("llm-fake-")
    assert other.summarizer_id != summarizer.summarizer_id


def test_an_over_long_reply_is_cut_at_a_sentence_end_within_the_target(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    server.repeat = 40  # ~40 x 50 tokens, asked for 60
    summarizer = _fast(server)

    summary = summarizer.summarize(CHILDREN, target_tokens=60, counter=counter)

    full = " ".join(FIRST_SENTENCES * 40)
    assert 0 < counter.count(summary) <= 60
    assert full.startswith(summary)
    assert summary.endswith(".")
    assert counter.count(summary) > 30  # not cut far earlier than needed


@pytest.mark.parametrize("target", [1, 2, 7, 13, 50])
def test_fit_to_tokens_never_exceeds_the_target(counter: TokenCounter, target: int) -> None:
    text = " ".join(FIRST_SENTENCES * 10)
    fitted = fit_to_tokens(text, target, counter)
    assert 0 < counter.count(fitted) <= target
    assert text.startswith(fitted)


def test_fit_to_tokens_falls_back_to_a_token_boundary_without_a_sentence_end(
    counter: TokenCounter,
) -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"
    fitted = fit_to_tokens(text, 5, counter)
    assert counter.count(fitted) == 5
    assert text.startswith(fitted)
    assert fit_to_tokens("  short.  ", 5, counter) == "short."


def test_it_retries_and_succeeds_after_two_failures(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    server.fail_next = 2
    summarizer = LLMSummarizer(_llm(server), attempts=3, backoff_s=0.05, timeout_s=HANG_S)

    started = time.monotonic()
    summary = summarizer.summarize(CHILDREN, target_tokens=100, counter=counter)

    assert summary == " ".join(FIRST_SENTENCES)
    assert len(server.prompts) == 3
    assert time.monotonic() - started >= 0.05 + 0.1  # backoff doubles: 0.05 then 0.1


def test_persistent_failure_raises_summary_failure_naming_the_cause(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    server.fail_next = 100
    summarizer = _fast(server, attempts=3)

    with pytest.raises(SummaryFailure) as raised:
        summarizer.summarize(CHILDREN, target_tokens=100, counter=counter)

    assert len(server.prompts) == 3
    assert isinstance(raised.value, WindowpackError)
    assert raised.value.code == "summary_failed"
    message = str(raised.value)
    assert "'fake'" in message
    assert "3 attempts" in message
    assert "InternalServerError" in message or "500" in message


def test_a_call_past_the_timeout_fails_promptly(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    server.delay_s = FOREVER_S
    summarizer = LLMSummarizer(_llm(server), attempts=1, backoff_s=0.01, timeout_s=0.3)

    started = time.monotonic()
    with pytest.raises(SummaryFailure, match=r"TimeoutError: no reply within 0\.3 s"):
        summarizer.summarize(CHILDREN, target_tokens=100, counter=counter)

    # Not before its timeout, and without waiting for the reply that never comes.
    assert 0.3 <= time.monotonic() - started < HANG_S


def test_a_timed_out_call_is_retried(server: FakeOpenAIServer, counter: TokenCounter) -> None:
    llm = _llm(server)
    # A first call warms the client (imports, connection), so that the retry below is one
    # local round trip: the timeout it must beat is 2 s, hundreds of times one under load.
    _ = LLMSummarizer(llm, timeout_s=HANG_S).summarize(CHILDREN, target_tokens=100, counter=counter)
    server.prompts.clear()
    server.delays = [FOREVER_S]
    summarizer = LLMSummarizer(llm, attempts=2, backoff_s=0.01, timeout_s=2.0)

    started = time.monotonic()
    summary = summarizer.summarize(CHILDREN, target_tokens=100, counter=counter)

    assert summary == " ".join(FIRST_SENTENCES)
    assert time.monotonic() - started < HANG_S  # the first reply, never sent, was not awaited
    assert len(server.prompts) == 2


def test_summarize_many_keeps_order_bounds_concurrency_and_returns_failures_in_place(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    server.gather = 3  # the first three wait for each other: three in flight, however slow
    server.delay_s = 0.05  # and the rest overlap, so that a fourth would be seen
    server.fail_if_contains = "Job 4 opens"
    jobs: list[tuple[list[str], int]] = [
        ([f"Job {i} opens here. Filler follows.", f"Job {i} closes here. More filler."], 40)
        for i in range(9)
    ]
    summarizer = LLMSummarizer(_llm(server), attempts=2, backoff_s=0.01, timeout_s=HANG_S)

    results = summarizer.summarize_many(jobs, counter=counter, max_concurrency=3)

    assert len(results) == len(jobs)
    for i, result in enumerate(results):
        if i == 4:
            assert isinstance(result, SummaryFailure)
            assert "2 attempts" in str(result)
        else:
            assert result == f"Job {i} opens here. Job {i} closes here."
    assert server.max_in_flight == 3
    assert len(server.prompts) == len(jobs) + 1  # the failing job was tried twice
    assert summarizer.summarize_many([], counter=counter) == []


def test_summarize_many_rejects_bad_arguments_before_calling(
    server: FakeOpenAIServer, counter: TokenCounter
) -> None:
    summarizer = _fast(server)
    with pytest.raises(InvalidArgumentError, match="max_concurrency"):
        summarizer.summarize_many([(CHILDREN, 10)], counter=counter, max_concurrency=0)
    with pytest.raises(InvalidArgumentError, match="target_tokens"):
        summarizer.summarize_many([(CHILDREN, 10), (CHILDREN, 0)], counter=counter)
    with pytest.raises(InvalidArgumentError, match="children"):
        summarizer.summarize([], target_tokens=10, counter=counter)
    assert server.prompts == []


def test_estimate_cost_adds_up(server: FakeOpenAIServer, counter: TokenCounter) -> None:
    summarizer = _fast(server)
    jobs = [(CHILDREN, 50), (CHILDREN[:1], 20), (CHILDREN[1:], 30)]

    estimate = summarizer.estimate_cost(jobs, counter=counter)

    prompts = [summarizer.build_prompt(children, target) for children, target in jobs]
    assert estimate == CostEstimate(
        calls=3, input_tokens=sum(counter.count(p) for p in prompts), output_tokens=100
    )
    assert estimate.total_tokens == estimate.input_tokens + 100
    # Each prompt is the template plus its passages (give or take a few tokens at the seams).
    template_tokens = counter.count(PROMPT_TEMPLATE)
    for (children, _), prompt in zip(jobs, prompts, strict=True):
        expected = template_tokens + sum(counter.count_many(children))
        assert abs(counter.count(prompt) - expected) <= 4 * len(children) + 4
    assert "3 LLM calls" in str(estimate)
    assert server.prompts == []  # estimating calls nothing


def test_without_llama_index_construction_names_the_extra(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = _llm(server)
    monkeypatch.setitem(sys.modules, "llama_index.core.llms", None)

    with pytest.raises(MissingDependencyError) as raised:
        LLMSummarizer(llm)

    assert "llama-index-core" in str(raised.value)
    assert "windowpack[llm]" in str(raised.value)


def test_importing_the_module_does_not_import_llama_index() -> None:
    import subprocess

    code = (
        "import sys; import windowpack.summarizer.llm; "
        "assert not any(m.startswith('llama_index') for m in sys.modules), 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_non_llm_or_bad_settings_are_rejected(server: FakeOpenAIServer) -> None:
    with pytest.raises(InvalidArgumentError, match="llm"):
        LLMSummarizer(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="prompt_template"):
        LLMSummarizer(_llm(server), prompt_template="Summarize: {passages}")
    with pytest.raises(InvalidArgumentError, match="attempts"):
        LLMSummarizer(_llm(server), attempts=0)


# --- the LLM summarizer building a store's tree ---------------------------------------------


def _tree_documents() -> list[Any]:
    import windowpack as wp

    paragraphs = [
        f"Station {name} logged {n} storms in {year}. The crew rebuilt the mast afterwards."
        for n, (name, year) in enumerate(
            [("Aurora", 1998), ("Basalt", 2003), ("Cinder", 2011), ("Drift", 2019)] * 3
        )
    ]
    return [
        wp.Document(text="\n\n".join(paragraphs[:6]), id="north"),
        wp.Document(text="\n\n".join(paragraphs[6:]), id="south"),
    ]


def test_a_store_builds_its_tree_with_the_llm_and_falls_back_per_node(
    server: FakeOpenAIServer, tmp_path: Any
) -> None:
    import windowpack as wp
    from windowpack.config import StoreConfig

    server.fail_if_contains = "Drift logged 7"  # every attempt on that node fails
    summarizer = _fast(server, attempts=2)
    notes: list[str] = []
    config = StoreConfig(embedder="hash", chunk_tokens=24, fanout=2)
    with wp.open(tmp_path / "store", config=config, summarizer=summarizer) as store:
        col = store.collection("docs")
        report = col.add(_tree_documents(), progress=lambda p: p.note and notes.append(p.note))
        nodes = [col.node(level_node) for level_node in _node_ids(col)]
    assert notes and "summarizer calls" in notes[0]  # the cost estimate, before the build
    assert server.prompts, "the tree was summarised through the server"
    assert report.summary_failures and all(
        "SummaryFailure" in reason for reason in report.summary_failures.values()
    )
    assert {node.summarizer for node in nodes} == {summarizer.summarizer_id}
    from_server = [node for node in nodes if node.text.startswith("Station")]
    assert from_server, "summaries are the server's replies"
    assert len(report.summary_failures) < len(nodes)


def _node_ids(col: Any) -> list[int]:
    from windowpack.storage import repository

    with col._context.sessions() as session:
        return [node.id for node in repository.tree_nodes(session, col.collection_id)]
