"""One question through ONNX Runtime: the same model as ingest's, without torch in the process.

A pack embeds its question before anything else, and at B = 8K that forward pass is most of
the pack: ~17 ms of ~22 ms through torch on this 2-core machine, ~7 ms through ONNX Runtime,
whose kernels have no per-operator dispatch cost to speak of. More than the forward pass,
importing torch, transformers and sentence-transformers costs a cold process 4-8 s of CPU
(most of a CLI `pack`), so the question path imports none of them: the question is cut into
word pieces by the `tokenizers` library (`query_tokenizer`) and run through the kept graph.
Documents keep the torch path: their batches are compute-bound, and their vectors are what
the embedding cache holds.

The graph is the sentence-transformers model's own transformer with mean pooling, exported
with `torch.onnx.export` once, at ingest (torch is loaded then anyway) or by the first
question when none is kept, and kept under the cache folder
(`$WINDOWPACK_CACHE_DIR/query-models`, else `~/.cache/windowpack/query-models`; in memory when
that is not writable) with its tokenizer and a record (`query_files`). It is checked when it
is made: the tokenizer's features and the graph's vectors for probe texts of a few lengths
must be the model's own; if they are not, nothing is kept and questions stay on torch. A
later process trusts the kept files when they are the ones recorded (their sha256); any other
file is exported again. Without `onnxruntime` and `onnx` installed, questions stay on torch.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from windowpack.embed.query_files import QueryModelFiles, new_record
from windowpack.embed.query_tokenizer import QueryTokenizer

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

_LOG = logging.getLogger("windowpack")
# A question's vector may differ from torch's by float rounding only: ~2e-7 was measured.
_TOLERANCE = 1e-4
_PROBES = (
    "tapirs",
    "What did the essay say about the second poem about tapirs in the long conversation?",
    " ".join(["Founders raise money from investors, then hire 12 engineers."] * 5),
)
# The tokenizer is also checked on what the graph probes do not show: nothing, other
# scripts, accents and a text past the model's length (truncation).
_TOKENIZER_PROBES = (
    "",
    "  Ünïcödé ﬁ straße — 東京 🦛 naïve\tcafé  ",
    " ".join(["antidisestablishmentarianism 1,234.5"] * 80),
)


class OnnxQueryModel:
    """A mean-pooled transformer as an ONNX Runtime session on one intra-op thread, with the
    tokenizer it was checked with."""

    def __init__(self, session: Any, tokenizer: QueryTokenizer, dimension: int) -> None:
        self._session = session
        self.tokenizer = tokenizer
        self.dimension = dimension
        """The length of its vectors."""

    def embed(self, features: Mapping[str, Any]) -> npt.NDArray[np.float32]:
        """The pooled vector (not normalised) of one tokenised text (`model.preprocess`, or
        `tokenizer.features`)."""
        feeds = {name: np.asarray(features[name], dtype=np.int64) for name in self.tokenizer.inputs}
        pooled = self._session.run(None, feeds)[0]
        return np.asarray(pooled[0], dtype=np.float32)

    def embed_text(self, text: str) -> npt.NDArray[np.float32]:
        """The unit vector of `text`; one longer than the model reads is embedded in windows
        whose unit vectors are averaged, as `SentenceTransformerEmbedder.embed` does."""
        features = self.tokenizer.features(text)
        if int(features["input_ids"].shape[1]) < self.tokenizer.max_length:
            return _unit(self.embed(features))
        pieces = self.tokenizer.windows(text)
        total = sum(_unit(self.embed(self.tokenizer.features(piece))) for piece in pieces)
        return _unit(np.asarray(total, dtype=np.float32))


def kept_query_model(files: QueryModelFiles) -> OnnxQueryModel | None:
    """The kept export when its files are the ones recorded, without importing torch; None
    when there is none, the files are not the recorded ones, or ONNX Runtime is missing."""
    if not _runtime_installed():
        return None
    trusted = files.trusted()
    if trusted is None:
        return None
    record, definition = trusted
    try:
        tokenizer = QueryTokenizer(definition, max_length=record.max_length, inputs=record.inputs)
        return OnnxQueryModel(_session(files.graph), tokenizer, record.dimension)
    except Exception as error:  # ONNX Runtime and tokenizers raise their own errors
        _LOG.info("the kept ONNX query model is not usable (%s): %s", type(error).__name__, error)
        return None


def query_model_for(
    files: QueryModelFiles, name: str, load_model: Callable[[], SentenceTransformer]
) -> OnnxQueryModel | None:
    """The question model of the model called `name`: the kept export (torch not imported),
    else a new export of the model `load_model` gives, checked against it and kept. None
    leaves questions on torch: the model is not a plain mean-pooled transformer, ONNX Runtime
    is missing, or no export matches the model."""
    if not _runtime_installed():
        _LOG.debug("onnxruntime is not installed: questions are embedded with torch")
        return None
    kept = kept_query_model(files)
    return kept if kept is not None else _export_checked(load_model(), name, files)


def _runtime_installed() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return False
    return True


def _export_checked(
    model: SentenceTransformer, name: str, files: QueryModelFiles
) -> OnnxQueryModel | None:
    """A new export of `model` with its tokenizer, kept when both match the model."""
    inputs = _supported_inputs(model)
    if inputs is None:
        return None
    try:
        graph = _exported(model, inputs)
        tokenizer = QueryTokenizer(
            model.tokenizer.backend_tokenizer.to_str(),
            max_length=int(model.max_seq_length or 512),
            inputs=inputs,
        )
    except Exception as error:  # no onnx, an exporter of another torch, a slow tokenizer
        _LOG.warning("cannot export %s to ONNX, questions use torch: %s", name, error)
        return None
    query_model = _matching(graph, tokenizer, model)
    if query_model is None:
        _LOG.warning("the ONNX export of %s does not match torch: questions use torch", name)
        return None
    record = new_record(
        name,
        graph,
        tokenizer.definition,
        max_length=tokenizer.max_length,
        inputs=inputs,
        dimension=query_model.dimension,
    )
    files.keep(graph, tokenizer.definition, record)
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


def _session(graph: Path | bytes) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # one question: see `SentenceTransformerEmbedder`
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # its own warnings about unused initialisers are noise
    source = str(graph) if isinstance(graph, Path) else graph
    return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _matching(
    graph: bytes, tokenizer: QueryTokenizer, model: SentenceTransformer
) -> OnnxQueryModel | None:
    """A query model of `graph` when its tokenizer gives the model's own features and its
    vectors for the probes match torch's; else None."""
    try:
        for probe in (*_PROBES, *_TOKENIZER_PROBES):
            if not _same_features(tokenizer.features(probe), model.preprocess([probe])):
                _LOG.info("the tokenizers library cuts %r otherwise than the model", probe[:40])
                return None
        expected = [_unit(_torch_pooled(model, model.preprocess([probe]))) for probe in _PROBES]
        query_model = OnnxQueryModel(_session(graph), tokenizer, dimension=len(expected[0]))
        for probe, vector in zip(_PROBES, expected, strict=True):
            # Compared as directions: the model may normalise, and the embedder does anyway.
            found = _unit(query_model.embed(model.preprocess([probe])))
            if found.shape != vector.shape or not np.allclose(found, vector, atol=_TOLERANCE):
                return None
    except Exception as error:  # ONNX Runtime raises its own errors
        _LOG.info("an ONNX query model is not usable (%s): %s", type(error).__name__, error)
        return None
    return query_model


def _same_features(found: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    return all(
        np.array_equal(found[name], np.asarray(expected[name], dtype=np.int64)) for name in found
    )


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
