"""Evals: NIAH, RULER-style and MRCR-style benchmarks over windowpack and its baselines.

    from windowpack.evals import NiahEval, load_haystack
    result = NiahEval(load_haystack(path), budgets=(2048, 8192), lengths=(8192,))(store)

Each eval is a callable returning a metric dict; `write_report` turns results into JSON, a
markdown table and PNG plots (matplotlib, the `evals` extra, imported only when plotting).
"""

from __future__ import annotations

from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack, generated_haystack, load_haystack
from windowpack.evals.mrcr import grade_mrcr, mrcr_case
from windowpack.evals.needles import RULER_TASKS, niah_case, ruler_case
from windowpack.evals.readers import DeterministicReader, OpenAIReader, Reader, score_reply
from windowpack.evals.runner import EVALS, MrcrEval, NiahEval, Progress, RulerEval
from windowpack.evals.systems import SYSTEMS

__all__ = [
    "EVALS",
    "RULER_TASKS",
    "SYSTEMS",
    "Case",
    "DeterministicReader",
    "Haystack",
    "MrcrEval",
    "NiahEval",
    "OpenAIReader",
    "Progress",
    "Reader",
    "RulerEval",
    "generated_haystack",
    "grade_mrcr",
    "load_haystack",
    "mrcr_case",
    "niah_case",
    "ruler_case",
    "score_reply",
]
