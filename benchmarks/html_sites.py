"""What real HTML sites become: titles, furniture left in, spacing lost, lists cut from their
lead-in.

Each site is parsed as one `Collection.add_files` call parses it (`documents.parse_paths`:
the pages of one add are read together, `documents.site_pages`) and chunked at 200 tokens of
o200k_base, then counted:

- **titles**: documents, distinct titles, the most common title and how many documents hold
  it, and documents titled by a banner (a title most pages offer as `<title>` or `<h1>`);
- **furniture**: blocks taken out as repeated (kind "repeated" in the furniture metadata)
  and pages with any; what the repeated-block detector still finds in the parsed texts
  (`site_pages` run again: 0 when nothing repeated is left); 20 random chunks per site are
  written to `benchmarks/results/html_sites-<site>-chunks.txt` to be read by eye;
- **spacing**: every `<p>` of every page whose text (white space normalised) is in neither
  the document's plain text (`documents.plain_text`) nor its furniture's: a conversion that
  changed what the page says. A *spacing difference* is one found once all white space is
  removed from both (html2text's "*term* , so"); any other is counted apart (a Markdown
  mark in the page's text read as markup: `__doc__` as bold, a list inside a definition
  read as text); the first few of each are printed;
- **lead-ins**: every line ending with ":" (outside code blocks) followed (past blank lines)
  by a list item, a code block, a table row or a definition: how many have what follows in
  the same chunk.

The lead-in and spacing checks read the texts, not the parser's own structures, so the same
script measures an older parser (run it with that checkout's `src` on PYTHONPATH).

Sites (name=folder[:glob,glob]) default to Debian's packages: the Rust book (rust-doc,
mdBook), Python's tutorial, reference and how-tos (python3.11-doc, Sphinx) and the 85 pages of
PostgreSQL 15's manual in `examples/pgdocs/pages.txt` (postgresql-doc-15, DocBook). A site
whose folder is missing is skipped with a line saying so. `--smoke` runs on a generated
four-page site in a temporary folder.

    .venv/bin/python benchmarks/html_sites.py
    .venv/bin/python benchmarks/html_sites.py --site rust=/tmp/book:ch*.html,appendix*.html
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_common import REPO_ROOT, RESULTS_DIR, add_smoke_option, write_results
from selectolax.lexbor import LexborHTMLParser

from windowpack.documents import (
    FURNITURE_KEY,
    Block,
    chunk_document,
    markdown_blocks,
    parse_paths,
    plain_text,
    site_pages,
)
from windowpack.text import get_token_counter
from windowpack.types import Document

CHUNK_TOKENS = 200
SAMPLE_CHUNKS = 20
SHOWN_MISSES = 5
PG_PAGES = REPO_ROOT / "examples" / "pgdocs" / "pages.txt"
DEFAULT_SITES = {
    "rust-book": "/usr/share/doc/rust-doc/html/book:ch*.html,appendix*.html",
    "python-docs": "/usr/share/doc/python3.11-doc/html:tutorial/*.html,reference/*.html,"
    "howto/*.html",
    "postgresql": f"/usr/share/doc/postgresql-doc-15/html:@{PG_PAGES}",
}
_SPACE = re.compile(r"\s+")
_LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
# A line (no heading) ending with ":", then what it introduces past blank lines: a list item,
# a code fence or indented code, a table row or a definition.
_LEAD_IN = re.compile(
    r"^(?P<line>(?!#)[^\n]*:[*_`]*)[ \t]*\n(?:[ \t]*\n)*"
    r"(?=[ \t]*(?:[-*+]\s|\d+[.)]\s|```|\||:   )|    )",
    re.MULTILINE,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="append", default=[], help="name=folder[:globs]")
    add_smoke_option(parser)
    args = parser.parse_args()
    counter = get_token_counter("o200k_base")
    with tempfile.TemporaryDirectory() as smoke_folder:
        sites = _sites(args, Path(smoke_folder))
        figures: dict[str, Any] = {}
        for name, (folder, files) in sites.items():
            if not files:
                print(f"{name}: skipped, no pages at {folder}", flush=True)
                continue
            started = time.perf_counter()
            parsed = parse_paths(files, max_bytes=64 * 1024 * 1024, root=folder)
            documents = parsed.documents
            seconds = time.perf_counter() - started
            site = {
                "pages": len(files),
                "documents": len(documents),
                "parse_s": round(seconds, 2),
                **_titles(documents),
                **_furniture(documents),
                **_spacing(folder, documents),
                **_lead_ins(documents, counter),
            }
            if not args.smoke:
                _write_sample(name, documents, counter)
            figures[name] = site
            print(f"{name}: {_shown(site)}", flush=True)
    path = write_results("html_sites", {"sites": figures, "smoke": args.smoke})
    print(f"Figures written to {path}")


def _sites(args: argparse.Namespace, smoke_folder: Path) -> dict[str, tuple[Path, list[Path]]]:
    if args.smoke:
        return {"smoke": (smoke_folder, _smoke_site(smoke_folder))}
    given = dict(item.split("=", 1) for item in args.site) if args.site else DEFAULT_SITES
    sites = {}
    for name, spec in given.items():
        folder_text, _, globs = spec.partition(":")
        folder = Path(folder_text)
        files: list[Path] = []
        for pattern in (globs or "*.html").split(","):
            if pattern.startswith("@"):
                listed = Path(pattern[1:]).read_text("utf-8").split()
                files += [folder / line for line in listed if not line.startswith("#")]
            else:
                files += sorted(folder.glob(pattern))
        sites[name] = (folder, [file for file in files if file.is_file()])
    return sites


# --- titles ----------------------------------------------------------------------------------


def _titles(documents: list[Document]) -> dict[str, Any]:
    titles = Counter(document.title for document in documents)
    common, held = titles.most_common(1)[0] if titles else ("", 0)
    offered: Counter[str] = Counter()
    for document in documents:
        offered.update(set((document.metadata.get("titles") or {}).values()))
    banners = {
        title for title, count in offered.items() if count >= 3 and count * 2 > len(documents)
    }
    return {
        "distinct_titles": len(titles),
        "most_common_title": common,
        "most_common_title_documents": held,
        "banner_titled_documents": sum(document.title in banners for document in documents),
    }


# --- furniture -------------------------------------------------------------------------------


def _furniture(documents: list[Document]) -> dict[str, Any]:
    entries = [
        [
            entry
            for entry in document.metadata.get(FURNITURE_KEY) or []
            if entry.get("kind") == "repeated"
        ]
        for document in documents
    ]
    again = site_pages(documents)
    left = sum(
        len(after.text) != len(before.text) for before, after in zip(documents, again, strict=True)
    )
    return {
        "repeated_blocks_removed": sum(len(found) for found in entries),
        "pages_with_repeated_blocks": sum(bool(found) for found in entries),
        "pages_with_repeats_left": left,
    }


def _write_sample(name: str, documents: list[Document], counter: Any) -> None:
    chunks = [
        (document.id, document.text[chunk.start : chunk.end])
        for document in documents
        for chunk in chunk_document(document, counter, CHUNK_TOKENS)
    ]
    sample = random.Random(42).sample(chunks, min(SAMPLE_CHUNKS, len(chunks)))
    path = RESULTS_DIR / f"html_sites-{name}-chunks.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(f"===== {document} =====\n{text}\n\n" for document, text in sample), "utf-8"
    )


# --- spacing ---------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _spacing(folder: Path, documents: list[Document]) -> dict[str, Any]:
    paragraphs = spacing = other = 0
    shown: list[str] = []
    for document in documents:
        source = (folder / (document.id or "")).read_text("utf-8", errors="replace")
        texts = [
            plain_text(text)
            for text in [
                document.text,
                *(
                    str(entry.get("text", ""))
                    for entry in document.metadata.get(FURNITURE_KEY) or []
                ),
            ]
        ]
        seen = " ".join(_normal(text) for text in texts)
        unspaced = _SPACE.sub("", seen)
        # A line break is white space in the text a reader sees (`text()` drops it).
        for node in LexborHTMLParser(_LINE_BREAK.sub("\n", source)).css("p"):
            text = _normal(node.text(deep=True))
            if not text or text in seen:
                paragraphs += bool(text)
                continue
            paragraphs += 1
            kind = "spacing" if _SPACE.sub("", text) in unspaced else "other"
            spacing += kind == "spacing"
            other += kind == "other"
            if len(shown) < SHOWN_MISSES or kind == "spacing":
                shown.append(f"{kind} differs: {document.id}: {text[:160]}")
    for line in shown[: SHOWN_MISSES * 2]:
        print(f"  {line}", flush=True)
    return {"paragraphs": paragraphs, "spacing_differences": spacing, "other_differences": other}


# --- lead-ins --------------------------------------------------------------------------------


def _lead_ins(documents: list[Document], counter: Any) -> dict[str, Any]:
    found = together = 0
    for document in documents:
        chunks = chunk_document(document, counter, CHUNK_TOKENS)
        code = _code_spans(markdown_blocks(document.text, 0, len(document.text)))
        for match in _LEAD_IN.finditer(document.text):
            colon, follows = match.end("line") - 1, match.end()
            if any(start <= colon < end for start, end in code):
                continue  # a line of code ("rule:" in a grammar), not a lead-in
            found += 1
            while follows < len(document.text) and document.text[follows] in " \t":
                follows += 1
            together += any(c.start <= colon and follows < c.end for c in chunks)
    return {"lead_ins": found, "lead_ins_with_what_follows": together}


def _code_spans(blocks: list[Block] | tuple[Block, ...]) -> list[tuple[int, int]]:
    spans = []
    for block in blocks:
        if block.code:
            spans.append((block.span.start, block.span.end))
        spans += _code_spans(block.parts)
    return spans


def _shown(site: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in site.items())


# --- the smoke site --------------------------------------------------------------------------

_SMOKE_PAGE = """<!DOCTYPE html><html><head><title>{title} - Smoke Book</title></head><body>
<div class="menu"><ul><li><button>Light (default)</button></li><li><button>Coal</button></li>
</ul><h1 class="menu-title">Smoke Book</h1></div>
<main><h2>{title}</h2><p>Page {number} says <em>this</em>, and <strong>that</strong>.</p>
<p>Here are the rules:</p><ul><li>one rule for page {number}</li><li>another rule</li></ul>
</main><div class="footer">Built with a generator.</div></body></html>"""


def _smoke_site(folder: Path) -> list[Path]:
    files = []
    for number in range(1, 5):
        path = folder / f"page{number}.html"
        path.write_text(_SMOKE_PAGE.format(title=f"Chapter {number}", number=number), "utf-8")
        files.append(path)
    return files


if __name__ == "__main__":
    main()
