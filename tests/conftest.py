"""Shared fixtures, named for the state they give (sqlite-utils habit)."""

from __future__ import annotations

import io
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pypdf
import pytest
from hypothesis import settings

import windowpack as wp
from template_store import MigratedTemplate
from tiers import mark_tiers
from windowpack.config import StoreConfig
from windowpack.storage import migrate

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
ESSAYS_JSON = SHARED_DATA / "ruler" / "PaulGrahamEssays.json"
POSTGRES_ADMIN_URL = os.environ.get(
    "WINDOWPACK_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)

HASH_CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)

# CI explores the same examples on every run (a red main must be reproducible) and never
# fails on timing; a developer's run explores fresh examples each time.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

TEMPLATE = MigratedTemplate(migrate)
"""Where the stores opened in this process get their migrated database from."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow`, `postgres` and `real_migrations` from what each test uses (tests/tiers.py)."""
    mark_tiers(items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Before any fixture of the test, a module's or a session's too, opens a store.
    TEMPLATE.enabled = item.get_closest_marker("real_migrations") is None


@pytest.fixture(autouse=True)
def windowpack_logger_restored() -> Iterator[None]:
    """The `windowpack` logger as each test found it. A command run in-process (`windowpack
    worker`) gives it a handler on the stderr of the moment, pytest's capture, and stops it
    propagating: later tests' records would go to a closed stream and never reach `caplog`."""
    logger = logging.getLogger("windowpack")
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)
    logger.propagate = propagate


@pytest.fixture(scope="session", autouse=True)
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MigratedTemplate]:
    """Every new SQLite store of the session starts as a copy of one migrated database."""
    TEMPLATE.path = tmp_path_factory.mktemp("migrated-template") / "windowpack.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("windowpack.service.context.migrate", TEMPLATE.copy_or_migrate)
        yield TEMPLATE
    TEMPLATE.path = None


@pytest.fixture
def hash_store(tmp_path: Path) -> Iterator[wp.Store]:
    """An empty embedded store using the model-free hash embedder and small chunks."""
    with wp.open(tmp_path / "store", config=HASH_CONFIG) as store:
        yield store


@pytest.fixture
def empty_collection(hash_store: wp.Store) -> wp.Collection:
    """A collection that exists and holds nothing (`collection()` alone creates nothing)."""
    return hash_store.create_collection("docs")


@pytest.fixture(scope="session")
def essays_text() -> str:
    """The ~680K-token RULER essay haystack from ../shared (skipped when it is absent)."""
    if not ESSAYS_JSON.exists():
        pytest.skip(f"shared data not found at {ESSAYS_JSON}: tests on the real essays skipped")
    import json

    return str(json.loads(ESSAYS_JSON.read_text(encoding="utf-8"))["text"])


def _postgres_reachable() -> str | None:
    try:
        import sqlalchemy

        engine = sqlalchemy.create_engine(POSTGRES_ADMIN_URL)
        with engine.connect():
            pass
        engine.dispose()
    except Exception as error:
        return str(error).splitlines()[0]
    return None


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    problem = _postgres_reachable()
    if problem is not None:
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {problem}")
    import sqlalchemy

    name = f"windowpack_test_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(sqlalchemy.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def any_database_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[wp.Store]:
    """An empty store on SQLite, then on PostgreSQL (the same code on both)."""
    if request.param == "sqlite":
        store = wp.open(tmp_path / "store", config=HASH_CONFIG)
    else:
        url = request.getfixturevalue("postgres_url")
        store = wp.open(url, index_dir=tmp_path / "indexes", config=HASH_CONFIG)
    with store:
        yield store


# --- PDF files (the parsing tests and the section-header tests build them) ---------------


def _text_pdf(pages: list[str], *, title: str | None = None) -> bytes:
    """A minimal valid PDF, one Helvetica text line per page, with exact xref offsets."""
    page_ids = [4 + 2 * index for index in range(len(pages))]
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for page_id, text in zip(page_ids, pages, strict=True):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    info = ""
    if title is not None:
        objects.append(f"<< /Title ({title}) >>".encode())
        info = f" /Info {len(objects)} 0 R"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\n".encode()
    out += b"startxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def _outlined_pdf(pages: list[str], outline: list[tuple[str, int, int]]) -> bytes:
    """`_text_pdf` with an outline: (title, page, depth) entries, each under the last
    shallower one."""
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(_text_pdf(pages))))
    parents: dict[int, object] = {}
    for title, page, depth in outline:
        parents[depth] = writer.add_outline_item(
            title=title, page_number=page, parent=parents.get(depth - 1)
        )
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


@pytest.fixture
def text_pdf() -> Callable[..., bytes]:
    """Builds a minimal PDF: one text line per page, an optional metadata title."""
    return _text_pdf


@pytest.fixture
def outlined_pdf() -> Callable[[list[str], list[tuple[str, int, int]]], bytes]:
    """Builds a text PDF with an outline of (title, page, depth) entries."""
    return _outlined_pdf
