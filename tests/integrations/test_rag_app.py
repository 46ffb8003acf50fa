"""examples/rag_app.py runs dry (no LLM configured) from a clone and prints the packed prompt."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from windowpack.text.tokens import get_token_counter

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_app.py"
QUESTION = "When is the backup generator next serviced?"


@pytest.mark.model
def test_the_dry_run_prints_the_packed_prompt(tmp_path: Path) -> None:
    command = [sys.executable, str(EXAMPLE), "--store", str(tmp_path), "--budget", "500"]
    result = subprocess.run(
        [*command, "-q", QUESTION], capture_output=True, text=True, timeout=300, check=False
    )

    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert "ingested" in output and "3 added" in output
    assert "dry run (no --llm-url)" in output
    reported = re.search(r"window: (\d+) of 500 o200k_base tokens", output)
    assert reported is not None
    tokens = int(reported.group(1))
    context = output.split("---------------------\n")[1].removesuffix("\n")
    assert get_token_counter("o200k_base").count(context) == tokens <= 500
    # The answer's source, verbatim from the shipped data, and the question after it.
    assert "the next one is due on 12 September 2024" in context
    assert f"Question: {QUESTION}" in output
