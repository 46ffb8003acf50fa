"""A collection whose documents have no indexable word (only stop words or punctuation, a
one-byte file) is a valid state (issue 14, D2): adding, searching and packing never 500, on
SQLite and PostgreSQL, over HTTP and in the library."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from reliability_helpers import LOCAL, SEALS

import windowpack as wp
from windowpack.api import ApiSettings, create_app
from windowpack.config import StoreConfig


def test_stop_words_and_a_one_byte_file_add_search_and_pack(
    any_database_store: wp.Store, tmp_path: Path
) -> None:
    app = create_app(ApiSettings(upload_dir=str(tmp_path / "up")), store=any_database_store)
    with TestClient(app, base_url=LOCAL) as client:
        assert client.post("/v1/collections", json={"name": "hamlet"}).status_code == 201
        added = client.post(
            "/v1/collections/hamlet/documents",
            json={"documents": [{"text": "To be, or not to be."}]},
        )
        assert added.status_code == 200, added.text
        for path, body in [
            ("search", {"query": "to be"}),
            ("search", {"query": "anything else"}),
            ("pack", {"query": "to be", "budget": 100}),
        ]:
            response = client.post(f"/v1/collections/hamlet/{path}", json=body)
            assert response.status_code == 200, response.text
        packed = client.post("/v1/collections/hamlet/pack", json={"query": "be", "budget": 100})
        assert "To be, or not to be." in packed.json()["text"], "dense search still finds it"
        upload = client.post("/v1/collections/hamlet/files", files=[("files", ("x.txt", b"x"))])
        assert upload.status_code == 200, upload.text
        assert client.get("/v1/collections/hamlet").json()["documents"] == 2
        # An indexable document later makes the lexical index useful again.
        later = client.post(
            "/v1/collections/hamlet/documents", json={"documents": [{"text": SEALS}]}
        )
        assert later.status_code == 200
        hits = client.post("/v1/collections/hamlet/search", json={"query": "sandbanks", "k": 1})
        assert hits.json()[0]["text"].startswith("Harbour seals")


def test_the_library_reopens_a_store_whose_lexical_index_is_empty(tmp_path: Path) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=64)
    with wp.open(tmp_path / "store", config=config) as store:
        store.collection("quiet").add(["?!", "the and of"])
    with wp.open(tmp_path / "store", config=config) as again:  # loaded from the saved files
        quiet = again.collection("quiet", create=False)
        assert len(quiet.search("the", 5)) == 2  # dense hits only
        assert quiet.pack("of", budget=50).tokens <= 50
