"""HTTP edges (issue 14): a 500 does not cost the client its keep-alive connection, a stalled
body is answered 408, job errors speak in user terms, a collection is deleted only when its
name is confirmed, PDFs have a page limit, database URLs print without their password."""

from __future__ import annotations

import io
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import sqlalchemy.exc
from reliability_helpers import serving

import windowpack as wp
from windowpack.api import ApiSettings, create_app
from windowpack.config import StoreConfig
from windowpack.documents.parsing import parse_file
from windowpack.errors import FileTooLargeError, StorageError
from windowpack.jobs import DocumentsInput, JobQueue, Worker
from windowpack.storage.database import create_database_engine


def _local_port(response: httpx.Response) -> int:
    stream = response.extensions["network_stream"]
    return int(stream.get_extra_info("client_addr")[1])


def test_after_a_500_the_next_request_uses_the_same_connection(
    store: wp.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(wp.Store, "collections", broken)
    with (
        serving(store, tmp_path) as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client,
    ):
        for _ in range(5):
            failed = client.get("/v1/collections")
            assert failed.status_code == 500
            assert failed.json()["error"]["code"] == "internal_error"
            assert "a bug" not in failed.text
            assert failed.headers.get("connection") != "close"
            ok = client.get("/v1/collections/docs")
            assert ok.status_code == 200
            # Kept alive: the answer after the 500 came on the very same TCP connection.
            assert _local_port(ok) == _local_port(failed)


def test_the_500_is_also_the_answer_on_a_raw_keep_alive_socket(
    store: wp.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wp.Store, "collections", lambda _self: 1 / 0)
    with serving(store, tmp_path) as port, socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(10)
        reader = sock.makefile("rb")
        for path in ["/v1/collections", "/healthz"]:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            status = reader.readline()
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            reader.read(length)
            assert status.split()[1] in (b"500", b"200"), status
        assert status.split()[1] == b"200", "the request after the 500 was answered"


def test_a_stalled_request_body_is_answered_408_and_the_connection_closed(
    store: wp.Store, tmp_path: Path
) -> None:
    with serving(store, tmp_path, body_timeout_s=0.5) as port:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.settimeout(10)
            started = time.monotonic()
            sock.sendall(
                f"POST /v1/collections/docs/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                '{"documents": [{"te'.encode()
            )
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            waited = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert b"request_timeout" in answer and b"connection: close" in answer.lower()
        assert 0.4 < waited < 120  # not before the timeout; the upper bound only catches a hang
    assert len(store.collection("docs")) == 1


def test_a_slow_but_steady_body_is_not_cut_off(store: wp.Store, tmp_path: Path) -> None:
    body = b'{"documents": [{"id": "slow", "text": "Slowly sent words about kites."}]}'
    # Pieces 0.1 s apart, 4 s in all, against a 3 s timeout: the body takes longer than the
    # timeout, and each gap leaves 2.9 s to a loaded machine before it would count as stalled.
    with serving(store, tmp_path, body_timeout_s=3.0) as port:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.settimeout(120)
            sock.sendall(
                f"POST /v1/collections/docs/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            step = -(-len(body) // 40)
            for start in range(0, len(body), step):
                sock.sendall(body[start : start + step])
                time.sleep(0.1)
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert store.collection("docs").get("slow").text.startswith("Slowly")


def _answer_while_trickling(port: int, head: bytes, pieces: list[bytes]) -> tuple[bytes, float]:
    """Send `head`, then `pieces` one at a time 0.2 s apart from another thread (as a slow or
    hostile client does) while reading the answer until the server closes: (answer, seconds).
    A server without deadlines answers nothing until every piece is sent, or never."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(60)  # only catches a hang: every deadline in these tests is 1 s
    stop = threading.Event()

    def trickle() -> None:
        for piece in pieces:
            if stop.wait(0.2):
                return
            try:
                sock.sendall(piece)
            except OSError:  # closed by the server: what the tests want
                return

    started = time.monotonic()
    sock.sendall(head)
    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except ConnectionResetError:
        pass
    waited = time.monotonic() - started
    stop.set()
    sender.join()
    sock.close()
    return answer, waited


def test_header_lines_trickled_forever_are_cut_off_by_the_head_deadline(
    store: wp.Store, tmp_path: Path
) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    lines = [b"X-Slow-%d: a\r\n" % i for i in range(300)]  # 60 s of header lines
    with serving(store, tmp_path, head_timeout_s=1.0) as port:
        answer, waited = _answer_while_trickling(port, head, lines)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"connection: close" in answer.lower()
    assert waited < 30, "the head deadline closed the connection long before the lines ended"


def test_half_a_request_line_is_cut_off_by_the_head_deadline(
    store: wp.Store, tmp_path: Path
) -> None:
    with serving(store, tmp_path, head_timeout_s=1.0) as port:
        answer, waited = _answer_while_trickling(port, b"GET /heal", [])
        # On a kept-alive connection, the next request's head has the same deadline.
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.settimeout(60)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /hea")
            second = b""
            while chunk := sock.recv(65536):
                second += chunk
    assert answer.startswith(b"HTTP/1.1 408") and waited < 30, answer[:200]
    assert second.startswith(b"HTTP/1.1 200") and second.count(b"HTTP/1.1 408") == 1, second


def test_a_body_trickled_a_byte_at_a_time_is_cut_off_by_the_body_deadline(
    store: wp.Store, tmp_path: Path
) -> None:
    head = (
        b"POST /v1/collections/docs/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    body = [b" "] * 300  # a byte every 0.2 s: well inside the 30 s between bytes
    with serving(store, tmp_path, body_deadline_s=1.0) as port:
        answer, waited = _answer_while_trickling(port, head, body)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"did not arrive within 1 s" in answer and b"connection: close" in answer.lower()
    assert waited < 30
    assert len(store.collection("docs")) == 1


@pytest.fixture
def failed_job_error(
    store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> Callable[[Exception], tuple[str, str]]:
    """(code, message) a job records when its ingest raises the error given."""

    def failed_with(error: Exception) -> tuple[str, str]:
        def raising(*_args: object, **_kwargs: object) -> wp.IngestReport:
            raise error

        monkeypatch.setattr(DocumentsInput, "run", raising)
        queue = JobQueue(store)
        job, _ = queue.enqueue(store.collection("docs"), DocumentsInput([]))
        assert Worker(queue).run_one()
        finished = queue.get(job.id)
        assert finished.status == "failed" and finished.error is not None
        return finished.error.code, finished.error.message

    return failed_with


def test_a_failed_job_does_not_show_sql_or_document_text(
    caplog: pytest.LogCaptureFixture, failed_job_error: Callable[[Exception], tuple[str, str]]
) -> None:
    statement = "INSERT INTO chunks (document_id, text) VALUES (?, ?)"
    error = sqlalchemy.exc.IntegrityError(
        statement, (7, "the secret document text"), Exception("UNIQUE")
    )
    with caplog.at_level(logging.ERROR, logger="windowpack.jobs"):
        code, message = failed_job_error(error)
    assert code == "internal_error"
    assert "INSERT" not in message and "secret" not in message
    assert "failed on the server" in message and "server log" in message
    assert "INSERT INTO chunks" in caplog.text, "the details go to the server log"


def test_a_job_storage_error_does_not_show_server_paths(
    caplog: pytest.LogCaptureFixture, failed_job_error: Callable[[Exception], tuple[str, str]]
) -> None:
    with caplog.at_level(logging.ERROR, logger="windowpack.jobs"):
        code, message = failed_job_error(StorageError("cannot write index files under /srv/wp/ix"))
    assert code == "storage_error" and "/srv/wp" not in message
    assert "/srv/wp/ix" in caplog.text


def test_a_job_bad_input_error_still_names_the_input(
    failed_job_error: Callable[[Exception], tuple[str, str]],
) -> None:
    from windowpack.errors import InvalidArgumentError

    code, message = failed_job_error(InvalidArgumentError("documents[0].id", "holds a NUL"))
    assert code == "invalid_argument" and "documents[0].id" in message


def test_deleting_a_collection_needs_its_name_confirmed(store: wp.Store, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    app = create_app(ApiSettings(upload_dir=str(tmp_path / "up")), store=store)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        # What a client normalising DELETE .../documents/.. sends: the collection itself.
        refused = client.delete("/v1/collections/docs")
        assert refused.status_code == 400 and "?confirm=docs" in refused.json()["error"]["message"]
        assert len(store.collection("docs")) == 1
        assert client.delete("/v1/collections/docs", params={"confirm": "docs"}).status_code == 204
    assert store.collections() == []


def _pdf(pages: int) -> bytes:
    import pypdf

    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=72, height=72)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_pdf_over_the_page_limit_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(_pdf(6))
    with pytest.raises(FileTooLargeError, match=r"long\.pdf: has 6 pages; the most is 5"):
        parse_file(path, max_bytes=10**6, max_pdf_pages=5)
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash", max_pdf_pages=5)) as store:
        with pytest.raises(FileTooLargeError, match="max_pdf_pages"):
            store.collection("docs").add_files([path])
        assert store.collections() == []


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+nodriver://reader:s3cr3t-pw@db.example/wp",
        "postgresql+psycopg://reader:s3cr3t-pw@db.example:notaport/wp",
    ],
)
def test_a_bad_database_url_is_shown_without_its_password(url: str, tmp_path: Path) -> None:
    with pytest.raises(StorageError) as caught:
        create_database_engine(url)
    assert "s3cr3t-pw" not in str(caught.value) and "reader:***@" in str(caught.value)
    with pytest.raises(StorageError) as opened:
        wp.open(url, index_dir=tmp_path / "ix")
    assert "s3cr3t-pw" not in str(opened.value)
