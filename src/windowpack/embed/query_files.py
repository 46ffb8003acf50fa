"""The kept ONNX export of a query model: three files under the cache folder, and how a later
process knows they are the ones that were checked.

`<key>.onnx` (the graph), `<key>.tokenizer.json` (the tokenizer it was checked with) and
`<key>.json`, the record: the two files' sha256, the model's length, inputs and dimension,
and the versions that made them. The record is written last, after the export matched torch
(`query_model`), so a record names a pair that was checked; a later process trusts the pair
when their sha256 are the recorded ones and loads neither torch nor transformers. A file that
is not (damaged, half copied, replaced) is exported again, which needs torch.

The key names the model (its path, and each of its files' size and modification time, so a
model replaced in place is not taken for the old one) and the versions of every library
that shapes the graph or reads it, read with `importlib.metadata`: importing torch to ask it
its version would cost the seconds this file saves.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from windowpack.config import cache_folder
from windowpack.text import write_atomically

_LOG = logging.getLogger("windowpack")
_FORMAT = "query-model-2"
_SHAPING = (
    "torch",
    "transformers",
    "sentence-transformers",
    "onnx",
    "onnxruntime",
    "tokenizers",
)
"""The libraries whose versions name the files: the exporter's, the model's, the readers'."""


@dataclass(frozen=True, kw_only=True)
class QueryModelRecord:
    """What `<key>.json` says of the graph and tokenizer beside it."""

    format: str
    model: str
    graph_sha256: str
    tokenizer_sha256: str
    max_length: int
    inputs: tuple[str, ...]
    dimension: int
    made_by: dict[str, str]
    """The versions of `_SHAPING` when the export was made and checked against torch."""


@dataclass(frozen=True)
class QueryModelFiles:
    """The three paths of one model's kept export."""

    graph: Path
    tokenizer: Path
    record: Path

    @classmethod
    def of(cls, name: str, path: str) -> QueryModelFiles:
        """The files of the model called `name` (as a store names it) read from `path`
        (the folder it loads from; the name itself for a hub name)."""
        key = _file_key(name, path)
        folder = cache_folder("query-models")
        return cls(folder / f"{key}.onnx", folder / f"{key}.tokenizer.json", folder / f"{key}.json")

    def trusted(self) -> tuple[QueryModelRecord, str] | None:
        """The record and the tokenizer's JSON when the record and both files are there and
        the files are the recorded ones; None (logged) otherwise."""
        if not self.record.exists():
            return None
        try:
            record = _read_record(self.record)
            graph_sha256 = _sha256_of(self.graph)
            tokenizer = self.tokenizer.read_bytes()
        except (OSError, ValueError, TypeError, KeyError) as error:
            _LOG.info("the kept ONNX query model %s is not readable: %s", self.record, error)
            return None
        found = (graph_sha256, hashlib.sha256(tokenizer).hexdigest())
        if record.format != _FORMAT or found != (record.graph_sha256, record.tokenizer_sha256):
            _LOG.warning(
                "the ONNX query model %s is not the file recorded beside it: it is exported again",
                self.graph,
            )
            return None
        return record, tokenizer.decode()

    def keep(self, graph: bytes, tokenizer: str, record: QueryModelRecord) -> None:
        """Write the three files, the record last; a folder that cannot be written is logged
        and skipped (the caller holds the session in memory already)."""
        try:
            # Processes may export at once: each file is whole, and a record that names
            # another writer's file is found out by its sha256 and the file made again.
            write_atomically(self.graph, graph)
            write_atomically(self.tokenizer, tokenizer.encode())
            write_atomically(self.record, json.dumps(asdict(record), indent=2).encode())
        except OSError as error:
            _LOG.warning("cannot keep the ONNX query model under %s: %s", self.graph.parent, error)


def new_record(
    name: str,
    graph: bytes,
    tokenizer: str,
    *,
    max_length: int,
    inputs: tuple[str, ...],
    dimension: int,
) -> QueryModelRecord:
    """The record of a graph and tokenizer just checked against torch."""
    return QueryModelRecord(
        format=_FORMAT,
        model=name,
        graph_sha256=hashlib.sha256(graph).hexdigest(),
        tokenizer_sha256=hashlib.sha256(tokenizer.encode()).hexdigest(),
        max_length=max_length,
        inputs=inputs,
        dimension=dimension,
        made_by=_versions(),
    )


def _read_record(path: Path) -> QueryModelRecord:
    fields: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    fields["inputs"] = tuple(str(name) for name in fields["inputs"])
    record = QueryModelRecord(**fields)
    if not (isinstance(record.max_length, int) and isinstance(record.dimension, int)):
        raise ValueError("max_length and dimension must be integers")
    return record


def _sha256_of(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _file_key(name: str, path: str) -> str:
    """What the files are named by: the model, its files, every version that shaped them."""
    parts = [_FORMAT, name, os.path.abspath(path) if os.path.exists(path) else path]
    parts += _model_files(path)
    parts += [f"{package}={version}" for package, version in _versions().items()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _model_files(path: str) -> list[str]:
    """Each file of a model folder with its size and modification time (a model replaced in
    place names other files); nothing for a hub name."""
    if not os.path.isdir(path):
        return []
    found = []
    for folder, _, names in sorted(os.walk(path)):
        for file_name in sorted(names):
            stat = os.stat(os.path.join(folder, file_name))
            relative = os.path.relpath(os.path.join(folder, file_name), path)
            found.append(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}")
    return found


def _versions() -> dict[str, str]:
    versions = {}
    for package in _SHAPING:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions
