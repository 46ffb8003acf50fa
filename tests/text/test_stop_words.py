"""bm25s's stop word lists, read from its module file without importing bm25s."""

from __future__ import annotations

import subprocess
import sys

import pytest

from windowpack.text import bm25s_stop_words


@pytest.mark.parametrize("name", ["STOPWORDS_EN", "STOPWORDS_EN_PLUS"])
def test_the_lists_are_bm25s_own(name: str) -> None:
    from bm25s import stopwords

    assert bm25s_stop_words(name) == frozenset(getattr(stopwords, name))
    assert {"the", "and", "of"} <= bm25s_stop_words(name)


def test_reading_them_imports_neither_bm25s_nor_scipy() -> None:
    script = (
        "import sys\n"
        "from windowpack.text import bm25s_stop_words\n"
        "assert 'the' in bm25s_stop_words('STOPWORDS_EN')\n"
        "print(sorted(m for m in ('bm25s', 'scipy', 'tqdm') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
