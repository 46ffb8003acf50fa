"""Uploads and background ingest jobs: progress, per-file failures, atomicity, size limits."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from api_helpers import OWLS, SEALS, error_code, local_client, settings_for, wait_for_job
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.api.schemas import JobOut
from windowpack.types import JobState


def _snapshot(client: TestClient) -> tuple[object, object]:
    return (
        client.get("/v1/collections/docs").json(),
        client.get("/v1/collections/docs/documents").json(),
    )


def test_uploaded_files_keep_their_names_as_ids(filled_client: TestClient) -> None:
    files = [
        ("files", ("notes/seals.txt", SEALS.encode(), "text/plain")),
        ("files", ("owls.md", f"# Owls\n\n{OWLS}".encode(), "text/markdown")),
        ("files", ("/home/me/ferry.txt", b"The ferry leaves at seven.", "text/plain")),
    ]
    response = filled_client.post("/v1/collections/docs/files", files=files)
    assert response.status_code == 200, response.text
    assert response.json()["added"] == 3
    ids = [
        item["id"] for item in filled_client.get("/v1/collections/docs/documents").json()["items"]
    ]
    # Upload order; a relative name keeps its folders (the library's ids, relative to a root);
    # an absolute one, as some clients send them, only its last component.
    assert ids[-3:] == ["notes/seals.txt", "owls.md", "ferry.txt"]


def test_two_files_of_one_name_in_two_folders_are_both_ingested(client: TestClient) -> None:
    files = [
        ("files", ("guide/index.md", b"# Guide\n\nThe guide starts here.", "text/markdown")),
        ("files", ("api/index.md", b"# API\n\nThe API reference.", "text/markdown")),
    ]
    for background in ("false", "true"):
        response = client.post(
            f"/v1/collections/docs{background}/files?background={background}", files=files
        )
        if background == "true":
            assert response.status_code == 202, response.text
            assert wait_for_job(client, response.json()["id"])["status"] == "succeeded"
        else:
            assert response.status_code == 200, response.text
        listed = client.get(f"/v1/collections/docs{background}/documents").json()["items"]
        assert {item["id"]: item["title"] for item in listed} == {
            "guide/index.md": "Guide",
            "api/index.md": "API",
        }


def test_an_upload_name_cannot_leave_its_folder_nor_be_a_file_and_a_folder(
    client: TestClient,
) -> None:
    for names in (["../escape.txt"], ["a/../../escape.txt"], ["a//b.txt"], ["a", "a/b.txt"],
                  ["a/b.txt", "a"]):  # fmt: skip
        files = [("files", (name, b"Kestrels hover.", "text/plain")) for name in names]
        response = client.post("/v1/collections/docs/files", files=files)
        assert response.status_code == 400, (names, response.text)
        assert "files[" in response.json()["error"]["message"], names
    assert client.get("/v1/collections").json()["collections"] == []


def test_a_bad_upload_is_a_clear_4xx_and_changes_nothing(filled_client: TestClient) -> None:
    before = _snapshot(filled_client)
    files = [
        ("files", ("good.txt", b"Kestrels hover over the verge.", "text/plain")),
        ("files", ("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png")),
    ]
    response = filled_client.post("/v1/collections/docs/files", files=files)
    assert response.status_code == 415 and error_code(response) == "unsupported_file"
    assert response.json()["error"]["message"].startswith("photo.png:")  # no server paths
    empty = filled_client.post("/v1/collections/docs/files", files=[("files", ("e.txt", b""))])
    assert empty.status_code == 422 and error_code(empty) == "empty_document"
    assert _snapshot(filled_client) == before


def test_a_background_job_reports_progress_and_failures_per_file(filled_client: TestClient) -> None:
    files = [
        ("files", ("good.txt", b"Kestrels hover over the verge.", "text/plain")),
        ("files", ("bad.txt", b"\xff\xfe\x00binary\x00", "text/plain")),
    ]
    response = filled_client.post(
        "/v1/collections/docs/files", files=files, params={"background": "true"}
    )
    assert response.status_code == 202
    assert response.headers["location"] == f"/v1/jobs/{response.json()['id']}"
    job = wait_for_job(filled_client, response.json()["id"])
    assert job["status"] == "succeeded" and job["stage"] == "done"
    assert list(job["failures"]) == ["bad.txt"]  # type: ignore[call-overload]
    assert job["documents"] == 1 and job["chunks"] == 1 and job["tokens"] > 0  # type: ignore[operator]
    assert filled_client.get("/v1/collections/docs/documents/good.txt").status_code == 200


def test_a_failed_job_says_why_and_stores_nothing(filled_client: TestClient) -> None:
    before = _snapshot(filled_client)
    twice = [{"id": "same", "text": "One."}, {"id": "same", "text": "Two."}]
    response = filled_client.post(
        "/v1/collections/docs/documents", json={"documents": twice}, params={"background": True}
    )
    job = wait_for_job(filled_client, response.json()["id"])
    assert job["status"] == "failed"
    assert job["error"]["code"] == "invalid_input" and "same" in job["error"]["message"]  # type: ignore[index]
    assert _snapshot(filled_client) == before


def test_a_job_reports_a_document_added_with_the_text_of_another(
    filled_client: TestClient,
) -> None:
    documents = [{"id": "seals-again", "text": SEALS}]  # the text of document "seals"
    response = filled_client.post(
        "/v1/collections/docs/documents", json={"documents": documents}, params={"background": True}
    )
    job = wait_for_job(filled_client, response.json()["id"])
    direct = filled_client.post(
        "/v1/collections/docs/documents", json={"documents": [{"id": "third", "text": SEALS}]}
    )

    assert job["status"] == "succeeded"
    assert job["report"]["duplicates"] == {"seals-again": "seals"}  # type: ignore[index]
    assert direct.json()["duplicates"] == {"third": "seals"}


def test_large_inputs_become_jobs_on_their_own(hash_store: wp.Store, tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path, background_above_bytes=100), store=hash_store)
    with local_client(app) as client:
        client.post("/v1/collections", json={"name": "docs"})
        small = client.post("/v1/collections/docs/documents", json={"documents": [{"text": "Hi."}]})
        assert small.status_code == 200
        large = client.post("/v1/collections/docs/documents", json={"documents": [{"text": SEALS}]})
        assert large.status_code == 202
        assert wait_for_job(client, large.json()["id"])["status"] == "succeeded"
        assert client.get("/v1/collections/docs").json()["documents"] == 2


def test_the_wire_form_of_a_job_has_every_field_of_the_record() -> None:
    # JobOut is JobState on the wire, field for field: a field added to one must reach both.
    assert list(JobOut.model_fields) == [field.name for field in dataclasses.fields(JobState)]


def test_unknown_job_is_404(client: TestClient) -> None:
    response = client.get("/v1/jobs/job-1-deadbeef")
    assert response.status_code == 404 and error_code(response) == "job_not_found"


def test_request_size_limit(hash_store: wp.Store, tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path, max_request_bytes=2000), store=hash_store)
    with local_client(app) as client:
        client.post("/v1/collections", json={"name": "docs"})
        declared = client.post(
            "/v1/collections/docs/documents", json={"documents": [{"text": "x" * 5000}]}
        )
        assert declared.status_code == 413 and error_code(declared) == "request_too_large"

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
            yield b'{"documents": [{"text": "'
            for _ in range(10):
                yield b"y" * 500
            yield b'"}]}'

        streamed = client.post(
            "/v1/collections/docs/documents",
            content=chunks(),
            headers={"content-type": "application/json"},
        )
        assert streamed.status_code == 413 and error_code(streamed) == "request_too_large"
        upload = client.post(
            "/v1/collections/docs/files", files=[("files", ("big.txt", b"z" * 5000))]
        )
        assert upload.status_code == 413
        assert client.get("/v1/collections/docs").json()["documents"] == 0
