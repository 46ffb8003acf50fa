"""What an ingest writes to: the collection, and the parts that chunk, summarise, embed and
index its documents."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed import Embedder
from windowpack.index import IndexStore
from windowpack.ingest.executor import IngestExecutor, LocalExecutor
from windowpack.ingest.progress import ProgressTracker
from windowpack.summarizer import Summarizer, SummaryCache, TreeBuilder
from windowpack.text import TokenCounter


@dataclass(frozen=True, kw_only=True)
class IngestTarget:
    """The collection being written and the parts that process it."""

    collection_id: int
    collection_name: str
    counter: TokenCounter
    chunk_tokens: int
    embedder: Embedder
    indexes: IndexStore
    sessions: sessionmaker[Session]
    summarizer: Summarizer
    fallback_summarizer: Summarizer
    fanout: int
    # Where chunking and embedding run; `embedder` is the executor's (see `ingest.executor`).
    executor: IngestExecutor = field(default_factory=LocalExecutor)

    def tree_builder(
        self, cache: SummaryCache, tracker: ProgressTracker | None = None
    ) -> TreeBuilder:
        return TreeBuilder(
            self.summarizer,
            self.counter,
            cache,
            fallback=self.fallback_summarizer,
            fanout=self.fanout,
            on_node=tracker.summarised if tracker is not None else None,
        )
