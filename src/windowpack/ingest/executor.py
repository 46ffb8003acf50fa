"""Where ingest's heavy, database-free work runs: in this process or fanned out over Ray.

The ingest pipeline (`windowpack.ingest`) hands an executor the work that needs neither the
database nor the indexes: parsing files, chunking documents and embedding texts. Everything
that reads or writes the store stays with the caller: the upsert check, the summary tree
and its cache, the embedding cache lookup (only texts not cached are sent out), the one
transaction and the index publication. So a Ray ingest writes exactly what a local one
writes, and a worker that dies loses nothing stored.

`LocalExecutor` is the default and imports nothing new. `executor="ray"` builds a
`ingest.ray_executor.RayExecutor`, imported only then: `import windowpack` never imports
Ray, and without the `ray` extra the store fails with a `MissingDependencyError` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from windowpack.config import StoreConfig
from windowpack.documents import Chunk, ParsedFile, ParseLimits, chunk_all, parse_or_error
from windowpack.embed import Embedder
from windowpack.errors import MissingDependencyError
from windowpack.types import Document


class IngestExecutor(Protocol):
    """Runs ingest's parsing, chunking and embedding; results come back in input order."""

    @property
    def name(self) -> str: ...

    def parse_files(self, paths: Sequence[Path], limits: ParseLimits) -> list[ParsedFile]: ...

    def chunk(
        self, documents: Sequence[Document], *, tokenizer: str, chunk_tokens: int
    ) -> list[list[Chunk]]: ...

    def embedder(self, local: Embedder) -> Embedder:
        """The embedder ingest uses: `local` itself, or one that fans its work out."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Everything in this process, one document after another (the default)."""

    @property
    def name(self) -> str:
        return "local"

    def parse_files(self, paths: Sequence[Path], limits: ParseLimits) -> list[ParsedFile]:
        return [parse_or_error(path, limits) for path in paths]

    def chunk(
        self, documents: Sequence[Document], *, tokenizer: str, chunk_tokens: int
    ) -> list[list[Chunk]]:
        return chunk_all(documents, tokenizer=tokenizer, chunk_tokens=chunk_tokens)

    def embedder(self, local: Embedder) -> Embedder:
        return local

    def close(self) -> None:
        pass


def make_executor(config: StoreConfig) -> IngestExecutor:
    """The executor `config.executor` names; Ray is imported only for `"ray"`."""
    if config.executor == "local":
        return LocalExecutor()
    try:
        from windowpack.ingest.ray_executor import RayExecutor
    except ImportError as error:
        if error.name is not None and error.name.split(".")[0] == "ray":
            raise MissingDependencyError("ray", "ray") from error
        raise
    return RayExecutor(
        address=config.ray_address,
        workers=config.ray_workers,
        embedder=config.embedder,
        batch_size=config.embed_batch_size,
    )
