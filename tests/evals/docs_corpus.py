"""A small synthetic manual for the docs eval tests: a Markdown page, an HTML page, a text
page and a page left out of the pages list, with questions whose answers are in them (one
with an answer that is nowhere)."""

from __future__ import annotations

import json
from pathlib import Path

FILLER = (
    "Operators tune the service by editing its configuration file and reloading it. "
    "Every setting has a type, a unit where it measures something, and a default. "
)

CONFIG_MD = (
    "# Configuration\n\n"
    "This page lists the settings of the storage engine.\n\n"
    "## cache_size\n\n"
    "`cache_size` (`integer`) sets the planner's assumption about the disk cache. "
    "The default is **4 gigabytes** (`4GB`).\n\n" + FILLER * 12 + "\n\n## flush_delay\n\n"
    "`flush_delay` (`integer`) is how long the writer sleeps between rounds. "
    "The default is _two hundred milliseconds_.\n\n" + FILLER * 12 + "\n"
)

DROP_HTML = (
    "<html><head><title>DROP THING</title></head><body>"
    "<h1>DROP THING</h1><p>DROP THING removes a thing.</p>"
    "<h2>Parameters</h2><dl><dt><code>FORCE</code></dt>"
    "<dd><p>Attempt to terminate all existing connections to the target thing.</p></dd></dl>"
    "<h2>Notes</h2><p>" + FILLER * 10 + "</p></body></html>\n"
)

TUTORIAL_TXT = (
    "Getting started.\n\nIn the jargon of the field, the service uses a client/server "
    "model. " + FILLER * 8 + "\n"
)

QUESTIONS = [
    {
        "question": "What is the default for cache_size?",
        "answer": "4 gigabytes (4GB)",
        "page": "guide/config.md",
    },
    {
        "question": "What does FORCE do when dropping a thing?",
        "answer": "terminate all existing connections to the target thing",
        "page": "ref/drop.html",
    },
    {"question": "What model does the service use?", "answer": "a Client/Server  model"},
    {
        "question": "What colour is the sky on the moon?",
        "answer": "a deep shade of ultramarine",
        "page": "tutorial.txt",
    },
]
"""The third has no page (any document may hold it); the last one's answer is nowhere."""


def write_corpus(root: Path) -> tuple[Path, Path, Path]:
    """The corpus folder, its pages list and the questions file, written under `root`."""
    corpus = root / "manual"
    (corpus / "guide").mkdir(parents=True)
    (corpus / "ref").mkdir()
    (corpus / "guide" / "config.md").write_text(CONFIG_MD, encoding="utf-8")
    (corpus / "ref" / "drop.html").write_text(DROP_HTML, encoding="utf-8")
    (corpus / "tutorial.txt").write_text(TUTORIAL_TXT, encoding="utf-8")
    (corpus / "unlisted.md").write_text("# Unlisted\n\nNot in the pages list.\n", encoding="utf-8")
    pages = root / "pages.txt"
    pages.write_text(
        "# the pages of the eval\nguide/config.md\n\nref/drop.html\n./tutorial.txt\n",
        encoding="utf-8",
    )
    questions = root / "questions.jsonl"
    questions.write_text(
        "".join(json.dumps(question) + "\n" for question in QUESTIONS), encoding="utf-8"
    )
    return corpus, pages, questions
