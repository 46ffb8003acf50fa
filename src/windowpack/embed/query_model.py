"""One question through ONNX Runtime: the same model as ingest's, ~2.5x faster on one text.

A pack embeds its question before anything else, and at B = 8K that forward pass is most of
the pack: ~17 ms of ~22 ms through torch on this 2-core machine, ~7 ms through ONNX Runtime,
whose kernels have no per-operator dispatch cost to speak of. Documents keep the torch path:
their batches are compute-bound, and their vectors are what the embedding cache holds.

The graph is the sentence-transformers model's own transformer with mean pooling, exported
with `torch.onnx.export` the first time a process needs it and kept under the cache folder
(`$WINDOWPACK_CACHE_DIR/query-models`, else `~/.cache/windowpack/query-models`; in memory when
that is not writable), named by the model and the versions that produced it. The file is
derived: before a session is used, its vectors for probe texts of a few lengths are compared
with the torch model's, and a file that does not match (damaged, another model's, another
exporter's) is exported again; if the export does not match either, questions stay on torch.
Without `onnxruntime` and `onnx` installed, they stay on torch as well.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from windowpack.config import cache_folder
from windowpack.text import write_atomically

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

_LOG = logging.getLogger("windowpack")
_FORMAT = "query-model-1"
# A question's vector may differ from torch's by float rounding only: ~2e-7 was measured.
_TOLERANCE = 1e-4
_PROBES = (
    "tapirs",
    "What did the essay say about the second poem about tapirs in the long conversation?",
    " ".join(["Founders raise money from investors, then hire 12 engineers."] * 5),
)


class OnnxQueryModel:
    """A mean-pooled transformer as an ONNX Runtime session on one intra-op thread."""

    def __init__(self, session: Any, inputs: tuple[str, ...]) -> None:
        self._session = session
        self._inputs = inputs

    def embed(self, features: Mapping[str, Any]) -> npt.NDArray[np.float32]:
        """The pooled vector (not normalised) of one tokenised text (`model.preprocess`)."""
        feeds = {name: np.asarray(features[name], dtype=np.int64) for name in self._inputs}
        pooled = self._session.run(None, feeds)[0]
        return np.asarray(pooled[0], dtype=np.float32)


def load_query_model(model: SentenceTransformer, name: str) -> OnnxQueryModel | None:
    """The ONNX session of `model` (known to the cache as `name`), or None when the model is
    not a plain mean-pooled transformer, ONNX Runtime is missing, or no export matches it."""
    try:
        import onnxruntime
    except ImportError:
        _LOG.debug("onnxruntime is not installed: questions are embedded with torch")
        return None
    inputs = _supported_inputs(model)
    if inputs is None:
        return None
    path = cache_folder("query-models") / f"{_file_key(name, onnxruntime.__version__)}.onnx"
    cached = _session_matching(path, model, inputs) if path.exists() else None
    if cached is not None:
        return cached
    try:
        graph = _exported(model, inputs)
    except Exception as error:  # no onnx, or an exporter of another torch or transformers
        _LOG.warning("cannot export %s to ONNX, questions use torch: %s", name, error)
        return None
    query_model = _session_matching(graph, model, inputs)
    if query_model is None:
        _LOG.warning("the ONNX export of %s does not match torch: questions use torch", name)
        return None
    _save(path, graph)
    return query_model


def _supported_inputs(model: SentenceTransformer) -> tuple[str, ...] | None:
    """The tokeniser outputs the graph takes, for a transformer plus mean pooling (and an
    optional normalisation, which the embedder does anyway); None for anything else."""
    modules = list(model)
    kinds = [type(module).__name__ for module in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    pooling_module: Any = modules[1]
    pooling = pooling_module.get_config_dict()
    if pooling.get("pooling_mode") != "mean" or not pooling.get("include_prompt", True):
        return None
    if str(model.device) != "cpu":
        return None
    features = model.preprocess(["probe"])
    names = ("input_ids", "attention_mask", "token_type_ids")
    return tuple(name for name in names if name in features)


def _file_key(name: str, runtime_version: str) -> str:
    """What the file is named by: the model and every version that shaped the graph."""
    import torch
    import transformers

    parts = (_FORMAT, os.path.abspath(name) if os.path.exists(name) else name)
    versions = (torch.__version__, transformers.__version__, runtime_version)
    return hashlib.sha256("\0".join((*parts, *versions)).encode()).hexdigest()[:24]


def _session_matching(
    graph: Path | bytes, model: SentenceTransformer, inputs: tuple[str, ...]
) -> OnnxQueryModel | None:
    """A session of `graph` when its vectors for the probes match torch's; else None."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # one question: see `SentenceTransformerEmbedder`
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # its own warnings about unused initialisers are noise
    source = str(graph) if isinstance(graph, Path) else graph
    try:
        session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        query_model = OnnxQueryModel(session, inputs)
        for probe in _PROBES:
            features = model.preprocess([probe])
            # Compared as directions: the model may normalise, and the embedder does anyway.
            found = _unit(query_model.embed(features))
            expected = _unit(_torch_pooled(model, features))
            if found.shape != expected.shape or not np.allclose(found, expected, atol=_TOLERANCE):
                return None
    except Exception as error:  # a damaged file: ONNX Runtime raises its own errors
        _LOG.info("an ONNX query model is not usable (%s): %s", type(error).__name__, error)
        return None
    return query_model


def _torch_pooled(
    model: SentenceTransformer, features: Mapping[str, Any]
) -> npt.NDArray[np.float32]:
    import torch

    with torch.inference_mode():
        output = model(dict(features))
    return np.asarray(output["sentence_embedding"][0].float().numpy(), dtype=np.float32)


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def _exported(model: SentenceTransformer, inputs: tuple[str, ...]) -> bytes:
    """The transformer and mean pooling as ONNX, with batch and length left free."""
    import onnx  # noqa: F401  (torch's exporter needs it; ~0.9 s to import, so only here)
    import torch

    example = model.preprocess([_PROBES[1]])
    graph = _mean_pooled_module()(model[0].auto_model, inputs).eval()
    axes = {name: {0: "batch", 1: "length"} for name in inputs}
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings(), torch.no_grad():
        # The tracer warns about every shape-dependent branch of the transformers code; the
        # probes decide whether the graph is right, so the warnings say nothing here.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            graph,
            tuple(example[name] for name in inputs),
            f"{folder}/graph.onnx",
            input_names=list(inputs),
            output_names=["pooled"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
        return Path(folder, "graph.onnx").read_bytes()


def _save(path: Path, graph: bytes) -> None:
    """Keep the export for the next process; a folder that cannot be written is logged and
    skipped (the session is in memory already)."""
    try:
        write_atomically(path, graph)  # processes may export at once
    except OSError as error:
        _LOG.warning("cannot keep the ONNX query model under %s: %s", path.parent, error)


def _mean_pooled_module() -> type[torch.nn.Module]:
    """The module class, defined on first use: torch is imported only to export a graph."""
    import torch

    class MeanPooled(torch.nn.Module):
        """The transformer's token vectors averaged over the attention mask, as
        sentence-transformers' mean pooling does."""

        def __init__(self, transformer: torch.nn.Module, inputs: tuple[str, ...]) -> None:
            super().__init__()
            self.transformer = transformer
            self.inputs = inputs

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            features = dict(zip(self.inputs, tensors, strict=True))
            tokens = self.transformer(**features).last_hidden_state
            mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            pooled: torch.Tensor = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return pooled

    return MeanPooled
