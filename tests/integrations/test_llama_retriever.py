"""WindowpackRetriever inside a real llama-index query engine, with llama-index's MockLLM.

MockLLM replies with the prompt it received, so the response is the exact prompt.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.utils import get_tokenizer

import windowpack as wp
from windowpack.integrations import WindowpackRetriever, window_pieces

BUDGET = 700


def _engine(retriever: WindowpackRetriever) -> RetrieverQueryEngine:
    return RetrieverQueryEngine.from_args(retriever, llm=MockLLM())


def test_the_prompt_holds_the_window_verbatim_within_budget(
    ops_collection: wp.Collection, question: str
) -> None:
    retriever = WindowpackRetriever(
        ops_collection, budget=BUDGET, tokenizer="cl100k_base", overview_tokens=BUDGET // 8
    )

    prompt = str(_engine(retriever).query(question))
    window = retriever.pack(question)

    assert {"chunk", "summary", "gap"} <= {item.kind for item in window.items}
    assert window.text in prompt
    assert "only Amira Haddad has it" in window.text
    # Counted by llama-index's own tiktoken (cl100k_base), not windowpack's counter.
    assert len(get_tokenizer()(window.text)) == window.tokens <= BUDGET


def test_nodes_come_in_window_order_with_provenance(
    ops_collection: wp.Collection, question: str
) -> None:
    retriever = WindowpackRetriever(ops_collection, budget=BUDGET, overview_tokens=BUDGET // 8)
    window = retriever.pack(question)

    nodes = retriever.retrieve(question)

    assert "\n\n".join(n.node.get_content() for n in nodes) == window.text
    assert [n.node.metadata["window_offset"] for n in nodes] == [i.offset for i in window.items]
    order = [info.id for info in ops_collection.documents()]
    seen = []
    for scored in nodes:
        metadata = scored.node.metadata
        kind, document_id = metadata["kind"], metadata["document_id"]
        if document_id is None:  # collection-level: the overview, whole documents left out
            assert kind in ("summary", "gap") and metadata["char_start"] is None
            continue
        seen.append(order.index(document_id))
        assert scored.node.ref_doc_id == document_id
        # The source document's own metadata, as added from llama-index.
        assert metadata["team"] == "ops" and metadata["title"] == metadata["file_name"]
        if kind == "chunk":
            source = ops_collection.get(document_id).text
            verbatim = source[metadata["char_start"] : metadata["char_end"]]
            assert scored.node.get_content().endswith(verbatim)
        if kind == "summary":
            assert metadata["char_start"] < metadata["char_end"]
            assert metadata["ordinal"] <= metadata["last_ordinal"]
            assert metadata["level"] >= 1
    assert seen == sorted(seen)
    assert nodes[0].node.metadata["cacheable"] and not nodes[-1].node.metadata["cacheable"]
    # Provenance is metadata for the app, not text for the model.
    assert all(n.node.get_content(metadata_mode="llm") == n.node.get_content() for n in nodes)


def test_the_async_path_gives_the_same_prompt(ops_collection: wp.Collection, question: str) -> None:
    retriever = WindowpackRetriever(ops_collection, budget=BUDGET)
    engine = _engine(retriever)

    sync_prompt = str(engine.query(question))
    async_prompt = str(asyncio.run(engine.aquery(question)))
    nodes = asyncio.run(retriever.aretrieve(question))

    assert async_prompt == sync_prompt
    assert [n.node.node_id for n in nodes] == [
        p.id for p in window_pieces(retriever.pack(question))
    ]


def test_node_ids_are_stable_across_questions(ops_collection: wp.Collection, question: str) -> None:
    retriever = WindowpackRetriever(ops_collection, budget=5000)

    first = {n.node.node_id: n.node.get_content() for n in retriever.retrieve(question)}
    second = {n.node.node_id: n.node.get_content() for n in retriever.retrieve("ferry parts")}

    shared = first.keys() & second.keys()
    assert shared
    assert all(first[key] == second[key] for key in shared)


def test_bad_settings_fail_at_construction(ops_collection: wp.Collection) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="budget"):
        WindowpackRetriever(ops_collection, budget=0)
    with pytest.raises(wp.WindowpackError, match="no-such-tokenizer"):
        WindowpackRetriever(ops_collection, budget=100, tokenizer="no-such-tokenizer")


@pytest.mark.parametrize(
    ("blocked", "name", "extra"),
    [
        ("llama_index", "WindowpackRetriever", "llama-index"),
        ("llama_index", "WindowpackPacker", "llama-index"),
        ("langchain_core", "WindowpackLangChainRetriever", "langchain"),
    ],
)
def test_a_missing_framework_names_the_extra(blocked: str, name: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "import windowpack.integrations as integrations\n"
        "try:\n"
        f"    getattr(integrations, {name!r})\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.startswith("MissingDependencyError")
    assert f"windowpack[{extra}]" in result.stdout


def test_importing_the_integrations_package_loads_no_framework() -> None:
    code = (
        "import sys, windowpack.integrations\n"
        "print([m for m in sys.modules if m.startswith(('llama_index', 'langchain'))])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "[]"
