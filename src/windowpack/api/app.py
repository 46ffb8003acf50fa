"""The app factory: one store per process, shared by every request, from `ApiSettings`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from windowpack import __version__
from windowpack.api.access import KeylessPages
from windowpack.api.deps import ApiContext
from windowpack.api.docs import install_docs
from windowpack.api.errors import UnexpectedErrors, install_error_handlers
from windowpack.api.limits import BodySizeLimit, JsonShapeLimit
from windowpack.api.metrics import Metrics, RequestMetrics
from windowpack.api.routes import ERRORS, collections, documents, jobs, ops, query, ui
from windowpack.api.settings import ApiSettings
from windowpack.api.warm_up import WarmUp
from windowpack.errors import InvalidArgumentError
from windowpack.jobs import JobQueue, Worker, WorkerSettings
from windowpack.service import Store
from windowpack.service import open as open_store

_DESCRIPTION = """The best context window for one question, at any token budget.

Send an API key as `Authorization: Bearer <key>` (or `X-API-Key`) when the server has keys.
Errors are `{"error": {"code", "message"}}`."""


def create_app(settings: ApiSettings | None = None, *, store: Store | None = None) -> FastAPI:
    """A FastAPI app over `store` (default: opened from `settings.store`).

    Refuses (`InvalidArgumentError` naming `host`) to serve beyond loopback without keys.
    A store passed in stays the caller's to close; one opened here closes with the app.
    """
    settings = settings or ApiSettings()
    if not settings.loopback_only:
        # Beyond loopback keys stay required even if every key is later revoked.
        settings = settings.model_copy(update={"require_keys": True})
    owned = store is None
    store = store or _open(settings)
    check_binding(settings, store)
    queue = JobQueue(store, keep=settings.jobs_kept)
    metrics = Metrics(store, queued_jobs=queue.queued_count)
    upload_dir = Path(settings.upload_dir) if settings.upload_dir else _store_folder(store)
    worker_settings = WorkerSettings(max_attempts=settings.job_attempts)
    api = ApiContext(
        store=store,
        jobs=queue,
        workers=tuple(
            Worker(queue, worker_settings, on_finish=metrics.job_finished)
            for _ in range(settings.workers)
        ),
        settings=settings,
        metrics=metrics,
        upload_dir=upload_dir,
        warm_up=WarmUp(store, enabled=settings.warm_up),
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        api.warm_up.start()
        api.start_workers()  # jobs a stopped server left behind are taken up again now
        yield
        api.warm_up.stop()
        api.close_workers()
        if owned:
            store.close()

    app = FastAPI(
        title="windowpack",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    install_docs(app)  # /docs and /redoc from installed files: they work offline
    app.state.api = api
    for router in (collections.router, documents.router, query.router, jobs.router):
        app.include_router(router, prefix="/v1", responses=ERRORS)
    app.include_router(ops.router, responses=ERRORS)
    app.include_router(ui.router)
    install_error_handlers(app)
    app.add_middleware(
        JsonShapeLimit, max_values=settings.max_json_values, max_depth=settings.max_json_depth
    )
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_request_bytes,
        body_timeout=settings.body_timeout_s,
        body_deadline=settings.body_deadline_s,
    )
    app.add_middleware(KeylessPages, store=store, settings=settings)
    app.add_middleware(RequestMetrics, metrics=metrics)
    app.add_middleware(UnexpectedErrors)  # outermost: it also sees the other middlewares' bugs
    return app


def check_binding(settings: ApiSettings, store: Store) -> None:
    """Beyond loopback, keys must be required; say how to create one if there is none."""
    if settings.loopback_only or store.api_keys.any_active():
        return
    raise InvalidArgumentError(
        "host",
        f"refusing to listen on {settings.host} without API keys: create one with "
        "`windowpack keys create NAME --collection '*' --write`, or listen on 127.0.0.1",
    )


def _store_folder(store: Store) -> Path:
    """Uploads wait for their job beside the store, so a restart finds them: the SQLite
    store's folder, or the index folder of a store on a database URL."""
    database = store.engine.url.database if store.engine.dialect.name == "sqlite" else None
    base = Path(database).resolve().parent if database else store.indexes.index_dir
    return base / "uploads"


def _open(settings: ApiSettings) -> Store:
    return open_store(settings.store, index_dir=settings.index_dir, config=settings.store_config())
