"""Local GGUF models opened with llama.cpp (`llama-cpp-python`, the `reader` extra).

One place opens them, for the token counter of a `.gguf` file (`get_token_counter`) and
for the evals' engine and reader: llama_cpp is imported here, inside `load_llama`, so that
importing windowpack never loads it, and llama.cpp's own log lines go to the Python logger
`windowpack.llama_cpp` (debug level) instead of stderr, where some of them (e.g. "n_ctx_seq
> n_ctx_train") are printed even with `verbose=False`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from windowpack.errors import InvalidArgumentError, MissingDependencyError

if TYPE_CHECKING:
    import llama_cpp

LOGGER = logging.getLogger("windowpack.llama_cpp")
# llama.cpp keeps a bare pointer to the callback: it must live as long as the process.
_log_callback: object | None = None
_LOG_LOCK = threading.Lock()


def load_llama(path: str | Path, *, argument: str, **options: Any) -> llama_cpp.Llama:
    """`llama_cpp.Llama(model_path=path, verbose=False, **options)`, with llama.cpp's log
    routed to `LOGGER`; errors name `argument` (the option the path came from)."""
    try:
        import llama_cpp
    except ImportError as error:
        raise MissingDependencyError("llama-cpp-python", "reader") from error
    model = Path(path).expanduser()
    if not model.is_file():
        raise InvalidArgumentError(argument, f"no GGUF model file at {model}")
    _route_log(llama_cpp)
    try:
        return llama_cpp.Llama(model_path=str(model), verbose=False, **options)
    except ValueError as error:  # llama-cpp-python's "Failed to load model from file"
        raise InvalidArgumentError(argument, f"cannot load {model}: {error}") from error


def _route_log(llama_cpp: Any) -> None:
    global _log_callback
    with _LOG_LOCK:
        if _log_callback is not None:
            return

        @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
        def to_logger(level: int, text: bytes, user_data: object) -> None:
            LOGGER.debug("%s", text.decode("utf-8", errors="replace").rstrip("\n"))

        llama_cpp.llama_log_set(to_logger, None)
        _log_callback = to_logger
