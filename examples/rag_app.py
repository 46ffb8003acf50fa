"""A small RAG app: questions about a folder, answered from a context windowpack packs.

    python examples/rag_app.py                                   # dry run over examples/data
    python examples/rag_app.py notes/ -q "Who owns the generator?" --budget 4000
    python examples/rag_app.py ../shared/some-folder --llm-url http://localhost:8000/v1 \\
        --model qwen2.5-7b-instruct -q "..."                     # any OpenAI-compatible server

Ingest: llama-index's `SimpleDirectoryReader` reads the folder (file paths as ids) and
`Collection.add_llama_documents` stores it; the store persists (`--store`), so files that did
not change cost nothing the next time. Answer: a llama-index `RetrieverQueryEngine` whose
retriever is `WindowpackRetriever`: the context is the packed window (relevant chunks
verbatim, summaries of the rest, never over `--budget` tokens), laid out with its
query-independent tier first so that prefix caches hit. LLM: an OpenAI-compatible endpoint
(`--llm-url` or `$WINDOWPACK_LLM_URL`; vLLM, SGLang, llama.cpp, Ollama, OpenAI...). Without
one the app runs dry: llama-index's `MockLLM` answers with the prompt it was given, and the
app prints that prompt, exactly what a model would receive.

Needs `pip install 'windowpack[llama-index,llm]'`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from llama_index.core import PromptTemplate, SimpleDirectoryReader
from llama_index.core.llms import LLM, LLMMetadata, MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import windowpack as wp
from windowpack.integrations import WindowpackRetriever

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_QUESTIONS = ["When is the backup generator next serviced, and what went wrong with it?"]
# Tokens kept free for the template, the question and the answer.
ANSWER_ROOM = 1024

QA_TEMPLATE = PromptTemplate(
    "Answer the question from the context below and nothing else. The context was packed by "
    "windowpack: text under a [chunk ...] or [turn ...] header is verbatim from the document "
    "named above it, a [summary ...] block summarises the part it names, and [... left out "
    "...] marks what is not shown. If the context does not hold the answer, say so. Name the "
    "documents you used.\n"
    "---------------------\n"
    "{context_str}\n"
    "---------------------\n"
    "Question: {query_str}\n"
    "Answer: "
)


class PromptEcho(MockLLM):
    """The dry run's LLM: llama-index's MockLLM, which replies with the prompt it was given.

    It reports the real model's context window, so that the engine lays the prompt out in one
    call as it would for that model (MockLLM's default window is smaller than most budgets).
    """

    context_window: int = 32_768

    def __init__(self, context_window: int) -> None:
        super().__init__()  # MockLLM's own __init__ takes only its own options
        self.context_window = context_window

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.context_window, num_output=ANSWER_ROOM)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.budget + ANSWER_ROOM > args.context_window:
        sys.exit(f"--budget {args.budget} leaves no room in a {args.context_window}-token model")
    config = wp.StoreConfig(embedder=args.embedder) if args.embedder else wp.StoreConfig()
    with wp.open(args.store, config=config) as store:
        collection = store.collection(args.collection)
        _ingest(collection, args.folder)
        retriever = WindowpackRetriever(collection, budget=args.budget, tokenizer=args.tokenizer)
        llm = _llm(args)
        engine = RetrieverQueryEngine.from_args(
            retriever, llm=llm, text_qa_template=QA_TEMPLATE, response_mode="compact"
        )
        for question in args.question or DEFAULT_QUESTIONS:
            _answer(engine, retriever, question, dry=isinstance(llm, PromptEcho))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", nargs="?", type=Path, default=DATA, help="files to answer from")
    parser.add_argument("-q", "--question", action="append", help="repeat for several")
    parser.add_argument("--budget", type=int, default=8000, help="context tokens (default 8000)")
    parser.add_argument("--tokenizer", default="o200k_base", help="the model's tokenizer")
    parser.add_argument(
        "--store",
        type=Path,
        default=Path(tempfile.gettempdir()) / "windowpack-rag-app",
        help="where the store persists between runs",
    )
    parser.add_argument("--collection", default="rag")
    parser.add_argument("--embedder", help='"hash" for a model-free dry run; default: MiniLM')
    parser.add_argument("--llm-url", default=os.environ.get("WINDOWPACK_LLM_URL"))
    parser.add_argument("--model", default=os.environ.get("WINDOWPACK_LLM_MODEL", "default"))
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "not-needed"))
    parser.add_argument("--context-window", type=int, default=32_768, help="the model's window")
    return parser


def _ingest(collection: wp.Collection, folder: Path) -> None:
    if not folder.is_dir():
        sys.exit(f"{folder}: not a folder")
    # File paths as ids: re-running over the same folder upserts instead of duplicating.
    documents = SimpleDirectoryReader(str(folder), recursive=True, filename_as_id=True).load_data()
    report = collection.add_llama_documents(documents)
    print(
        f"ingested {folder}: {report.added} added, {report.replaced} replaced, "
        f"{report.unchanged} unchanged ({len(collection)} documents in {collection.name!r})"
    )


def _llm(args: argparse.Namespace) -> LLM:
    if not args.llm_url:
        return PromptEcho(context_window=args.context_window)
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(
        model=args.model,
        api_base=args.llm_url,
        api_key=args.api_key,
        context_window=args.context_window,
        is_chat_model=True,
        timeout=120.0,
    )


def _answer(
    engine: RetrieverQueryEngine, retriever: WindowpackRetriever, question: str, *, dry: bool
) -> None:
    response = engine.query(question)
    window = retriever.pack(question)  # the window behind that answer (cached)
    print(f"\n=== {question}")
    print(
        f"window: {window.tokens} of {window.budget} {window.tokenizer} tokens, "
        f"{len(window.items)} items, {window.cacheable_prefix_tokens} cacheable"
    )
    if dry:
        print("dry run (no --llm-url): the prompt the LLM would receive follows.\n")
    print(response)


if __name__ == "__main__":
    raise SystemExit(main())
