"""Check a manual's questions file against its pages, as the docs eval will read them.

    python examples/manuals/check_questions.py CORPUS_FOLDER examples/manuals/NAME

reads NAME/pages.txt and NAME/questions.jsonl, parses the pages as `windowpack eval docs`
does, and prints: the corpus size in cl100k tokens, the questions per kind, every answer
string missing from its pages (a wrong string, or a parser that changed the text), and every
answer string also found on a page the question does not name (not specific to its page).
Exit status 1 when an answer is missing.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from windowpack.config import StoreConfig
from windowpack.evals.docs_set import load_docs_set, normalise_answer_text
from windowpack.text import get_token_counter


def main(corpus: Path, folder: Path) -> int:
    docs = load_docs_set(
        corpus,
        folder / "questions.jsonl",
        pages=folder / "pages.txt",
        max_bytes=StoreConfig().max_file_bytes,
    )
    tokens = sum(get_token_counter("cl100k_base").count_many([d.text for d in docs.documents]))
    print(f"{len(docs.documents)} pages, {tokens:,} cl100k tokens, {len(docs.questions)} questions")
    print("kinds:", dict(Counter(question.kind for question in docs.questions)))
    texts = {d.id: normalise_answer_text(d.text) for d in docs.documents}
    missing = 0
    for question in docs.questions:
        for answer in question.answers:
            wanted = normalise_answer_text(answer)
            on = sorted(page for page, text in texts.items() if wanted in text)
            named = set(question.pages)
            if named and not named & set(on):
                missing += 1
                print(f"MISSING line {question.line}: {answer!r} not on {sorted(named)}")
            elif not on:
                missing += 1
                print(f"MISSING line {question.line}: {answer!r} on no page")
            elif named and set(on) - named:
                others = sorted(set(on) - named)
                print(f"ALSO    line {question.line}: {answer!r} also on {others[:5]}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
