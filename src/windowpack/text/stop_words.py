"""bm25s's stop word lists, read without importing bm25s.

The BM25 index drops bm25s's English stop words (so that it drops what the index it replaced
did) and the repeated-request finder its longer list. Importing `bm25s.stopwords` runs
bm25s's own `__init__` first (its retrievers, tqdm, scipy.sparse: ~0.15 s of a ~1.2 s cold
CLI `pack`) for two tuples of words, so the module's file is run alone; a bm25s whose lists
need the package is imported as usual.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from windowpack.errors import MissingDependencyError

_MODULE = "stopwords.py"


@functools.cache
def bm25s_stop_words(name: str) -> frozenset[str]:
    """The words of bm25s's stop word list `name` (`STOPWORDS_EN`, `STOPWORDS_EN_PLUS`)."""
    spec = importlib.util.find_spec("bm25s")
    for location in spec.submodule_search_locations or [] if spec else []:
        words = _names_in_file(Path(location) / _MODULE, name)
        if words is not None:
            return frozenset(words)
    try:
        from bm25s import stopwords
    except ImportError as error:  # pragma: no cover - a core dependency
        raise MissingDependencyError("bm25s", "default") from error
    return frozenset(getattr(stopwords, name))


def _names_in_file(path: Path, name: str) -> tuple[str, ...] | None:
    """The tuple of strings `name` in the module file at `path`, run alone; None when it
    is not there or needs its package."""
    spec = importlib.util.spec_from_file_location(f"_windowpack_{path.stem}", path)
    if spec is None or spec.loader is None or not path.is_file():
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:
        return None
    found = getattr(module, name, None)
    return tuple(found) if isinstance(found, tuple | list) else None
