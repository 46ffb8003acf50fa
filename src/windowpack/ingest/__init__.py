"""The ingest pipeline: parse → chunk → summarise → embed → one transaction → publish indexes.

`ingest_documents` (in `pipeline`) is the one write path the facade calls. The work that needs
neither the database nor the indexes (parsing, chunking, embedding) goes through an
`IngestExecutor`: `LocalExecutor` in this process, or `RayExecutor` over a Ray pool, imported
only when `make_executor` is asked for `"ray"`.
"""

from __future__ import annotations

from windowpack.ingest.executor import IngestExecutor, LocalExecutor, make_executor
from windowpack.ingest.pipeline import delete_documents, ingest_documents, rebuild_tree
from windowpack.ingest.progress import LOG_INTERVAL_SECONDS, ProgressCallback, ProgressLog
from windowpack.ingest.target import IngestTarget
from windowpack.ingest.timing import timed_calls

__all__ = [
    "LOG_INTERVAL_SECONDS",
    "IngestExecutor",
    "IngestTarget",
    "LocalExecutor",
    "ProgressCallback",
    "ProgressLog",
    "delete_documents",
    "ingest_documents",
    "make_executor",
    "rebuild_tree",
    "timed_calls",
]
