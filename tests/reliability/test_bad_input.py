"""The bad-input corpus over HTTP, on SQLite and PostgreSQL (issue 14: D1, D4, D7, D9, ...).

Every case is a request a careless or hostile client could send. Each must get a 4xx in the
one error shape whose message names the offending field, leave the store exactly as it was
(collections, stats with the index version, every document's metadata and text), and leave
search and pack working. Bodies are sent as JSON text written by `json.dumps`, which can
carry what a client's JSON can and Python's strings cannot always: lone surrogates
("\\ud800"), NaN and Infinity.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from reliability_helpers import FilledServer, assert_still_serving, error_of, snapshot

DOCS = "/v1/collections/docs/documents"
PACK = "/v1/collections/docs/pack"
SEARCH = "/v1/collections/docs/search"
VALIDATION = frozenset({422})
ARGUMENT = frozenset({400})
EITHER = frozenset({400, 422})


@dataclass(frozen=True)
class Case:
    """One bad request: what is sent, the statuses allowed, words the message must hold."""

    name: str
    method: str
    path: str
    body: Any = None
    words: tuple[str, ...] = ()
    statuses: frozenset[int] = EITHER
    params: dict[str, str] = field(default_factory=dict)
    files: list[tuple[str, tuple[str, bytes]]] | None = None


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def _nested_list(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _document(**fields: Any) -> dict[str, Any]:
    return {"documents": [{"text": "A harmless sentence about kites.", **fields}]}


def _metadata(name: str, metadata: Any, *words: str) -> Case:
    return Case(
        f"metadata-{name}", "POST", DOCS, _document(metadata=metadata), ("metadata", *words)
    )


def _id(name: str, value: Any, *words: str) -> Case:
    return Case(f"id-{name}", "POST", DOCS, _document(id=value), ("id", *words))


def _path_id(name: str, path: str, *words: str) -> Case:
    return Case(
        f"path-id-{name}", "PUT", f"{DOCS}/{path}", {"text": "kites"}, ("document_id", *words)
    )


DOCUMENT_CASES = [
    _metadata("depth-40", _nested(40), "nested deeper"),
    _metadata("depth-300", _nested(300)),
    _metadata("list-depth-40", {"x": _nested_list(40)}, "nested deeper"),
    _metadata("lone-surrogate-value", {"x": "\ud800"}, "metadata.x", "surrogate"),
    _metadata("lone-surrogate-key", {"\udfff": 1}, "surrogate"),
    _metadata("nul-value", {"x": "a\x00b"}, "metadata.x", "NUL"),
    _metadata("nul-key", {"a\x00": 1}, "NUL"),
    _metadata("nul-deep", {"x": [{"y": "\x00"}]}, "metadata.x[0].y", "NUL"),
    _metadata("nan", {"x": float("nan")}, "metadata.x", "nan"),
    _metadata("infinity", {"x": float("inf")}, "metadata.x", "inf"),
    _metadata("minus-infinity", {"x": [float("-inf")]}, "metadata.x[0]", "inf"),
    _metadata("too-large", {"x": "y" * 70_000}, "bytes"),
    _metadata("a-list", [1, 2]),
    _metadata("a-string", "tags"),
    Case(
        "metadata-float-overflow",
        "POST",
        DOCS,
        '{"documents": [{"text": "kites", "metadata": {"x": 1e400}}]}',
        ("metadata",),
    ),
    Case(
        "metadata-int-5000-digits",
        "POST",
        DOCS,
        # Past Python's 4,300-digit limit the body is no JSON to parse: no field to name.
        '{"documents": [{"text": "kites", "metadata": {"x": ' + "9" * 5000 + "}}]}",
        ("body",),
    ),
    Case("text-nul", "POST", DOCS, {"documents": [{"text": "kites\x00"}]}, ("text", "NUL")),
    Case("text-surrogate", "POST", DOCS, {"documents": [{"text": "kites \ud800"}]}, ("text",)),
    Case("text-empty", "POST", DOCS, {"documents": [{"text": ""}]}, ("text",)),
    Case(
        "text-blank", "POST", DOCS, {"documents": [{"text": "  \n "}]}, ("text",), frozenset({422})
    ),
    Case("text-number", "POST", DOCS, {"documents": [{"text": 5}]}, ("text",)),
    Case("text-missing", "POST", DOCS, {"documents": [{"title": "t"}]}, ("text",)),
    Case("title-nul", "POST", DOCS, _document(title="T\x00"), ("title", "NUL")),
    Case("title-surrogate", "POST", DOCS, _document(title="\ud83d"), ("title",)),
    Case("title-too-long", "POST", DOCS, _document(title="t" * 2000), ("title",)),
    Case("title-number", "POST", DOCS, _document(title=7), ("title",)),
    _id("dot", ".", "segment"),
    _id("dot-dot", "..", "segment"),
    _id("inner-dot-dot", "a/../seals", "segment"),
    _id("inner-dot", "a/./b", "segment"),
    _id("encoded-dot-dot", "%2e%2e", "segment"),
    _id("encoded-dot-segment", "notes/%2E", "segment"),
    _id("backslash-dot-dot", "a\\..\\b", "segment"),
    _id("empty-segment", "a//b", "empty path segment"),
    _id("trailing-slash", "notes/", "empty path segment"),
    _id("nul", "a\x00b", "NUL"),
    _id("tab", "a\tb", "control character"),
    _id("newline", "a\nb", "control character"),
    _id("delete-char", "a\x7fb", "control character"),
    _id("c1-control", "a\x85b", "control character"),
    _id("only-spaces", "   ", "whitespace"),
    _id("leading-space", " seals", "whitespace"),
    _id("trailing-space", "seals ", "whitespace"),
    _id("empty", ""),
    _id("too-long", "x" * 1025),
    _id("surrogate", "id-\udc80"),
    _id("number", 5),
    Case("kind-unknown", "POST", DOCS, _document(kind="poem"), ("kind",)),
    Case("unknown-field", "POST", DOCS, _document(txt="x"), ("txt",)),
    Case("no-documents", "POST", DOCS, {"documents": []}, ("documents",)),
    Case("documents-not-list", "POST", DOCS, {"documents": {"text": "x"}}, ("documents",)),
    Case(
        "duplicate-ids",
        "POST",
        DOCS,
        {"documents": [{"id": "k", "text": "kites one"}, {"id": "k", "text": "kites two"}]},
        ("'k'", "twice"),
        ARGUMENT,
    ),
    Case(
        "background-not-bool",
        "POST",
        DOCS,
        _document(),
        ("background",),
        params={"background": "maybe"},
    ),
    Case("body-not-json", "POST", DOCS, "{not json", ("json",)),
    Case("body-a-list", "POST", DOCS, [{"text": "x"}], ("body",)),
    _path_id("encoded-dot-dot", "%2e%2e", "segment"),
    _path_id("encoded-dot-segment", "notes/%2E%2e/seals", "segment"),
    _path_id("nul", "a%00b", "NUL"),
    _path_id("tab", "a%09b", "control character"),
    _path_id("trailing-space", "seals%20", "whitespace"),
    _path_id("empty-segment", "a//b", "empty path segment"),
    _path_id("too-long", "x" * 1025),
    Case("put-text-nul", "PUT", f"{DOCS}/kites", {"text": "k\x00"}, ("text", "NUL")),
    Case(
        "put-metadata-nan",
        "PUT",
        f"{DOCS}/kites",
        {"text": "k", "metadata": {"v": float("nan")}},
        ("metadata",),
    ),
    Case(
        "put-metadata-deep",
        "PUT",
        f"{DOCS}/kites",
        {"text": "k", "metadata": _nested(50)},
        ("metadata",),
    ),
    Case("put-id-in-body", "PUT", f"{DOCS}/kites", {"text": "k", "id": "other"}, ("id",)),
]

READ_CASES = [
    Case("get-nul-id", "GET", f"{DOCS}/a%00b", None, ("document_id", "NUL")),
    Case("delete-nul-id", "DELETE", f"{DOCS}/a%00b", None, ("document_id", "NUL")),
    Case(
        "get-invalid-utf8-id",
        "GET",
        f"{DOCS}/%ED%A0%80",
        None,
        ("document",),
        frozenset({400, 404, 422}),
    ),
    Case("list-limit-zero", "GET", DOCS, None, ("limit",), params={"limit": "0"}),
    Case("list-limit-over-max", "GET", DOCS, None, ("limit",), params={"limit": "5000"}),
    Case("list-offset-negative", "GET", DOCS, None, ("offset",), params={"offset": "-1"}),
    Case("list-offset-word", "GET", DOCS, None, ("offset",), params={"offset": "ten"}),
    Case("tree-node-negative", "GET", "/v1/collections/docs/tree/nodes/-1", None, ("node_id",)),
    Case("tree-node-word", "GET", "/v1/collections/docs/tree/nodes/root", None, ("node_id",)),
    Case("tree-node-huge", "GET", f"/v1/collections/docs/tree/nodes/{2**60}", None, ("node_id",)),
    Case("job-unknown", "GET", "/v1/jobs/job-0-00000000", None, ("job",), frozenset({404})),
    Case("job-id-too-long", "GET", f"/v1/jobs/{'j' * 65}", None, ("job_id",)),
]

QUERY_CASES = [
    Case("search-k-true", "POST", SEARCH, {"query": "seals", "k": True}, ("k",)),
    Case("search-k-float", "POST", SEARCH, {"query": "seals", "k": 2.5}, ("k",)),
    Case("search-k-string", "POST", SEARCH, {"query": "seals", "k": "5"}, ("k",)),
    Case("search-k-zero", "POST", SEARCH, {"query": "seals", "k": 0}, ("k",)),
    Case("search-k-over-max", "POST", SEARCH, {"query": "seals", "k": 5000}, ("k",)),
    Case("search-query-empty", "POST", SEARCH, {"query": ""}, ("query",)),
    Case("search-query-too-long", "POST", SEARCH, {"query": "q" * 20_001}, ("query",)),
    Case("search-query-missing", "POST", SEARCH, {"k": 3}, ("query",)),
    Case(
        "search-summaries-string",
        "POST",
        SEARCH,
        {"query": "seals", "include_summaries": "yes"},
        ("include_summaries",),
    ),
    Case("pack-budget-true", "POST", PACK, {"query": "seals", "budget": True}, ("budget",)),
    Case("pack-budget-false", "POST", PACK, {"query": "seals", "budget": False}, ("budget",)),
    Case("pack-budget-float", "POST", PACK, {"query": "seals", "budget": 100.5}, ("budget",)),
    Case("pack-budget-string", "POST", PACK, {"query": "seals", "budget": "100"}, ("budget",)),
    Case("pack-budget-zero", "POST", PACK, {"query": "seals", "budget": 0}, ("budget",)),
    Case("pack-budget-negative", "POST", PACK, {"query": "seals", "budget": -5}, ("budget",)),
    Case("pack-budget-over-max", "POST", PACK, {"query": "seals", "budget": 10**7}, ("budget",)),
    Case("pack-budget-missing", "POST", PACK, {"query": "seals"}, ("budget",)),
    Case(
        "pack-tokenizer-path",
        "POST",
        PACK,
        {"query": "seals", "budget": 100, "tokenizer": "/etc/passwd"},
        ("tokenizer",),
    ),
    Case(
        "pack-format-unknown",
        "POST",
        PACK,
        {"query": "seals", "budget": 100, "format": "xml"},
        ("format",),
    ),
    Case(
        "pack-overview-negative",
        "POST",
        PACK,
        {"query": "seals", "budget": 100, "overview_tokens": -1},
        ("overview_tokens",),
    ),
    Case(
        "pack-overview-true",
        "POST",
        PACK,
        {"query": "seals", "budget": 100, "overview_tokens": True},
        ("overview_tokens",),
    ),
    Case(
        "pack-align-string",
        "POST",
        PACK,
        {"query": "seals", "budget": 100, "align": "yes"},
        ("align",),
    ),
    Case(
        "pack-cache-control-number",
        "POST",
        PACK,
        {"query": "seals", "budget": 100, "cache_control": 1},
        ("cache_control",),
    ),
    Case(
        "multi-pack-no-collections",
        "POST",
        "/v1/pack",
        {"query": "q", "budget": 100, "collections": []},
        ("collections",),
    ),
    Case(
        "multi-pack-unknown",
        "POST",
        "/v1/pack",
        {"query": "q", "budget": 100, "collections": ["nope"]},
        ("nope",),
        frozenset({404}),
    ),
    Case(
        "multi-pack-too-many",
        "POST",
        "/v1/pack",
        {"query": "q", "budget": 100, "collections": ["docs"] * 101},
        ("collections",),
    ),
    Case(
        "multi-pack-budget-true",
        "POST",
        "/v1/pack",
        {"query": "q", "budget": True, "collections": ["docs"]},
        ("budget",),
    ),
]

COLLECTION_CASES = [
    Case("create-name-dot", "POST", "/v1/collections", {"name": "."}, ("name",)),
    Case("create-name-dot-dot", "POST", "/v1/collections", {"name": ".."}, ("name",)),
    Case("create-name-slash", "POST", "/v1/collections", {"name": "a/b"}, ("name",)),
    Case("create-name-empty", "POST", "/v1/collections", {"name": ""}, ("name",)),
    Case("create-name-too-long", "POST", "/v1/collections", {"name": "n" * 65}, ("name",)),
    Case("create-name-nul", "POST", "/v1/collections", {"name": "a\x00"}, ("name",)),
    Case(
        "create-chunk-tokens-true",
        "POST",
        "/v1/collections",
        {"name": "c1", "chunk_tokens": True},
        ("chunk_tokens",),
    ),
    Case(
        "create-chunk-tokens-small",
        "POST",
        "/v1/collections",
        {"name": "c1", "chunk_tokens": 8},
        ("chunk_tokens",),
    ),
    Case(
        "create-tokenizer-unknown",
        "POST",
        "/v1/collections",
        {"name": "c1", "tokenizer": "gpt2"},
        ("tokenizer",),
    ),
    Case(
        "create-existing",
        "POST",
        "/v1/collections",
        {"name": "docs"},
        ("docs", "exists"),
        frozenset({409}),
    ),
    Case("delete-without-confirm", "DELETE", "/v1/collections/docs", None, ("confirm",), ARGUMENT),
    Case(
        "delete-wrong-confirm",
        "DELETE",
        "/v1/collections/docs",
        None,
        ("confirm",),
        ARGUMENT,
        {"confirm": "other"},
    ),
    Case(
        "delete-confirm-other-case",
        "DELETE",
        "/v1/collections/docs",
        None,
        ("confirm",),
        ARGUMENT,
        {"confirm": "DOCS"},
    ),
    Case(
        "delete-confirm-empty",
        "DELETE",
        "/v1/collections/docs",
        None,
        ("confirm",),
        ARGUMENT,
        {"confirm": ""},
    ),
]

_FILES = "/v1/collections/docs/files"
UPLOAD_CASES = [
    Case(
        "upload-name-300-bytes",
        "POST",
        _FILES,
        None,
        ("files[0]", "255"),
        files=[("files", ("n" * 296 + ".txt", b"kites fly"))],
    ),
    Case(
        "upload-name-multibyte-over",
        "POST",
        _FILES,
        None,
        ("files[0]", "255"),
        files=[("files", ("é" * 130 + ".txt", b"kites"))],
    ),
    Case(
        # httpx percent-encodes tab, newline and NUL in a multipart file name; DEL travels.
        "upload-name-delete-char",
        "POST",
        _FILES,
        None,
        ("id", "control character"),
        ARGUMENT,
        files=[("files", ("a\x7fb.txt", b"kites"))],
    ),
    Case(
        "upload-name-trailing-space",
        "POST",
        _FILES,
        None,
        ("kites.txt", "unsupported file type"),
        frozenset({415}),
        files=[("files", ("kites.txt ", b"kites"))],
    ),
    Case(
        "upload-empty-file",
        "POST",
        _FILES,
        None,
        ("empty.txt", "no text"),
        frozenset({422}),
        files=[("files", ("empty.txt", b""))],
    ),
    Case(
        "upload-binary",
        "POST",
        _FILES,
        None,
        ("blob.txt",),
        frozenset({415}),
        files=[("files", ("blob.txt", b"\x00\x01\x02\xff" * 64))],
    ),
    Case(
        "upload-unsupported-suffix",
        "POST",
        _FILES,
        None,
        ("run.exe",),
        frozenset({415}),
        files=[("files", ("run.exe", b"MZ"))],
    ),
    Case(
        "upload-same-name-twice",
        "POST",
        _FILES,
        None,
        ("files", "k.txt"),
        files=[("files", ("k.txt", b"kites")), ("files", ("k.txt", b"more kites"))],
    ),
    Case(
        "upload-bad-pdf",
        "POST",
        _FILES,
        None,
        ("bad.pdf", "PDF"),
        frozenset({415}),
        files=[("files", ("bad.pdf", b"%PDF-1.4 not really"))],
    ),
    Case(
        "upload-bad-json",
        "POST",
        _FILES,
        None,
        ("chat.json",),
        frozenset({415}),
        files=[("files", ("chat.json", b"{oops"))],
    ),
    Case(
        "upload-over-request-limit",
        "POST",
        _FILES,
        None,
        ("limit",),
        frozenset({413}),
        files=[("files", ("big.txt", b"kites " * 300_000))],
    ),
    Case("upload-no-files", "POST", _FILES, None, ("files",), files=[]),
]

CASES = DOCUMENT_CASES + READ_CASES + QUERY_CASES + COLLECTION_CASES + UPLOAD_CASES


def _send(server: FilledServer, case: Case) -> Any:
    if case.files is not None:
        files = case.files or None
        data = None if files else {"nothing": "here"}
        return server.client.request(
            case.method, case.path, params=case.params, files=files, data=data
        )
    content = case.body if isinstance(case.body, str) else None
    if content is None and case.body is not None:
        content = json.dumps(case.body)  # ensure_ascii: surrogates travel as \\uXXXX escapes
    headers = {"Content-Type": "application/json"} if content is not None else {}
    return server.client.request(
        case.method, case.path, params=case.params, content=content, headers=headers
    )


def test_the_corpus_is_broad_and_names_are_distinct() -> None:
    assert len(CASES) >= 60
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_bad_input_is_a_clear_4xx_and_changes_nothing(
    filled_server: FilledServer, case: Case
) -> None:
    response = _send(filled_server, case)
    assert response.status_code in case.statuses, (response.status_code, response.text)
    code, message = error_of(response)
    assert code != "internal_error"
    for word in case.words:
        assert word.lower() in message.lower(), (word, message)
    assert snapshot(filled_server.store) == filled_server.before, (
        "a rejected request changed the store"
    )
    assert_still_serving(filled_server.client)
