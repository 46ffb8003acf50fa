"""Evals: NIAH, RULER-style and MRCR-style benchmarks over windowpack and its baselines.

    from windowpack.evals import MrcrEval, NiahEval, load_haystack
    result = NiahEval(haystack=load_haystack(path), budgets=(2048, 8192), lengths=(8192,))(store)
    result = MrcrEval(haystack=..., budgets=(8192,), lengths=(1 << 20,), samples=8)(store)
    docs = load_docs_set(corpus, questions, pages=pages, max_bytes=store.config.max_file_bytes)
    result = DocsEval(docs=docs, budgets=(2000, 4000, 8000))(store)

`DocsEval` measures real documents: a corpus folder (or a pages list in it) and questions with
answer strings; window recall, never over budget, and what each window is made of
(`window_composition`: content, summaries, headers, markers, unused).

Each eval is a callable returning a metric dict (per-case rows, means with 95% intervals per
cell and overall, where the time went); `write_report` turns results into JSON, a markdown
report and PNG plots (matplotlib, the `evals` extra, imported only when plotting).

`LlamaEngine` probes a real inference engine (llama.cpp in process, the `reader` extra):
prompt tokens evaluated and served from its KV cache, time to first token. `LlamaCppReader`
answers with it beside the deterministic reader (`windowpack eval --reader llama-cpp`).
"""

from __future__ import annotations

from windowpack.evals.associative_set import ASSOCIATIVE_NEEDLES, AssociativeNeedle
from windowpack.evals.cases import Case
from windowpack.evals.chunk_view import ChunkView, chunk_view
from windowpack.evals.cli_run import READERS, EvalRequest, run_evals
from windowpack.evals.composition import Composition, window_composition
from windowpack.evals.contexts import Target
from windowpack.evals.docs_eval import DOCS_BUDGETS, DocsEval
from windowpack.evals.docs_set import (
    DocsSet,
    Question,
    answer_found,
    load_docs_set,
    load_manual,
    load_questions,
    normalise_answer_text,
)
from windowpack.evals.engine import EngineReply, LlamaEngine
from windowpack.evals.haystack import Haystack, generated_haystack, load_haystack, split_bounds
from windowpack.evals.llama_baseline import LlamaIndexRetriever
from windowpack.evals.local_model import bundled_model_path
from windowpack.evals.local_reader import LlamaCppReader
from windowpack.evals.mrcr import grade_mrcr, mrcr_case
from windowpack.evals.mrcr_gdm import INDEX_NAMES, gdm_mrcr_case, grade_mrcr_gdm
from windowpack.evals.mrcr_words import FEW_SHOT
from windowpack.evals.needles import RULER_TASKS, niah_case, ruler_case
from windowpack.evals.readers import (
    BoundedReader,
    DeterministicReader,
    OpenAIReader,
    Reader,
    score_reply,
)
from windowpack.evals.registry import EVALS
from windowpack.evals.runner import MRCR_SHAPES, MrcrEval, NiahEval, Progress, RulerEval
from windowpack.evals.stats import mean_interval
from windowpack.evals.systems import SYSTEMS, make_system

__all__ = [
    "ASSOCIATIVE_NEEDLES",
    "DOCS_BUDGETS",
    "EVALS",
    "FEW_SHOT",
    "INDEX_NAMES",
    "MRCR_SHAPES",
    "READERS",
    "RULER_TASKS",
    "SYSTEMS",
    "AssociativeNeedle",
    "BoundedReader",
    "Case",
    "ChunkView",
    "Composition",
    "DeterministicReader",
    "DocsEval",
    "DocsSet",
    "EngineReply",
    "EvalRequest",
    "Haystack",
    "LlamaCppReader",
    "LlamaEngine",
    "LlamaIndexRetriever",
    "MrcrEval",
    "NiahEval",
    "OpenAIReader",
    "Progress",
    "Question",
    "Reader",
    "RulerEval",
    "Target",
    "answer_found",
    "bundled_model_path",
    "chunk_view",
    "gdm_mrcr_case",
    "generated_haystack",
    "grade_mrcr",
    "grade_mrcr_gdm",
    "load_docs_set",
    "load_haystack",
    "load_manual",
    "load_questions",
    "make_system",
    "mean_interval",
    "mrcr_case",
    "niah_case",
    "normalise_answer_text",
    "ruler_case",
    "run_evals",
    "score_reply",
    "split_bounds",
    "window_composition",
]
