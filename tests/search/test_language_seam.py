"""The language seam on real non-English manuals: the Debian handbook's German and Chinese
editions (Debian's `debian-handbook`; `make test` installs it). A collection's language is
detected at ingest, its BM25 terms follow that language's rules, and a question in it finds
its page; the window says which rules it used."""

from __future__ import annotations

from pathlib import Path

import pytest

import windowpack as wp

HANDBOOK = Path("/usr/share/doc/debian-handbook/html")
PAGES = [
    "sect.task-scheduling-cron-atd.html",
    "sect.asynchronous-task-scheduling-anacron.html",
    "sect.syslog.html",
    "sect.remote-login.html",
    "sect.firewall-packet-filtering.html",
    "sect.apt-get.html",
    "sect.apt-cache.html",
    "sect.backup.html",
]


def _edition(tmp_path: Path, code: str, config: wp.StoreConfig) -> wp.Collection:
    folder = HANDBOOK / code
    if not folder.is_dir():
        pytest.skip(f"{folder} is not installed (apt-get install debian-handbook)")
    store = wp.open(tmp_path / code, config=config)
    collection = store.collection(code)
    collection.add_files([folder / page for page in PAGES])
    return collection


def test_a_german_manual_is_read_by_german_rules(tmp_path: Path) -> None:
    collection = _edition(tmp_path, "de-DE", wp.StoreConfig(embedder="hash"))
    question = "Wo werden die geplanten Befehle eines Benutzers gespeichert?"
    window = collection.pack(question, budget=1500)
    assert window.retrieval is not None and window.retrieval["language"] == "de"
    # German stop words dropped ("die", "eines"), German stems ("geplant", "befehl")
    assert "die" not in window.retrieval["terms"] and "befehl" in window.retrieval["terms"]
    assert "/var/spool/cron/crontabs/benutzer" in window.text
    first = collection.search(question, k=1)[0]
    assert Path(first.document_id).name == "sect.task-scheduling-cron-atd.html"


def test_an_english_model_over_german_text_needs_its_rankings_to_agree(tmp_path: Path) -> None:
    """The bundled MiniLM's card says it was trained on English: over the German edition its
    cosines may not raise a unit alone (two-sided fusion); over the English one they may."""
    question = {"de-DE": "Wo werden die geplanten Befehle eines Benutzers gespeichert?"}
    question["en-US"] = "Where are the scheduled commands of a user stored?"
    for code, fusion in (("de-DE", "two-sided fusion"), ("en-US", "one-sided fusion")):
        collection = _edition(tmp_path, code, wp.StoreConfig())
        window = collection.pack(question[code], budget=1500)
        assert window.retrieval is not None
        assert fusion in window.retrieval["stages"], (code, window.retrieval["stages"])
        assert "/var/spool/cron/crontabs/" in window.text


def test_a_chinese_manual_is_cut_into_character_pairs(tmp_path: Path) -> None:
    collection = _edition(tmp_path, "zh-CN", wp.StoreConfig(embedder="hash"))
    question = "每个用户的计划任务命令存储在哪个文件中？"  # noqa: RUF001
    window = collection.pack(question, budget=1500)
    assert window.retrieval is not None and window.retrieval["language"] == "zh"
    assert "计划" in window.retrieval["terms"]  # a pair, not the whole clause
    assert "/var/spool/cron/crontabs/user" in window.text
    hits = collection.search(question, k=10)
    assert "sect.task-scheduling-cron-atd.html" in {Path(h.document_id).name for h in hits}


def test_plain_rules_cannot_cut_a_chinese_clause(tmp_path: Path) -> None:
    """Without the CJK rules a clause is one word: the question's terms match nothing."""
    config = wp.StoreConfig(embedder="hash", language="xx")
    collection = _edition(tmp_path, "zh-CN", config)
    question = "每个用户的计划任务命令存储在哪个文件中？"  # noqa: RUF001
    window = collection.pack(question, budget=1500)
    assert window.retrieval is not None and window.retrieval["language"] == "und"
    assert "计划" not in window.retrieval["terms"]
    # BM25 matched nothing: no item of the window is there for the question's words
    assert window.items and all(item.why != "words" for item in window.items)
