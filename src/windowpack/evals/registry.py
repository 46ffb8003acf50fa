"""Every eval by the task name the CLI takes."""

from __future__ import annotations

from windowpack.evals.docs_eval import DocsEval
from windowpack.evals.fact_evals import AggregationEval, AssociativeEval, MultiHopEval
from windowpack.evals.runner import GridEval, MrcrEval, NiahEval, RulerEval

EVALS: dict[str, type[GridEval]] = {
    "niah": NiahEval,
    "ruler": RulerEval,
    "mrcr": MrcrEval,
    "associative": AssociativeEval,
    "multihop": MultiHopEval,
    "aggregation": AggregationEval,
    "docs": DocsEval,
}
