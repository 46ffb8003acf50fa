"""`windowpack serve`: the REST API, its settings from flags and the environment;
`windowpack worker`, which runs its ingest jobs in a process of its own; and `windowpack
mcp`, the MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from windowpack.errors import InvalidArgumentError

if TYPE_CHECKING:
    from windowpack.api import ApiSettings

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]


def serve(
    store: Annotated[
        str | None, typer.Option(help="Store folder or database URL [env: WINDOWPACK_STORE].")
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="Address to listen on [env: WINDOWPACK_HOST; 127.0.0.1].")
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Port to listen on [env: WINDOWPACK_PORT; 8000].")
    ] = None,
    index_dir: Annotated[
        str | None,
        typer.Option(help="Index folder, needed with a database URL [env: WINDOWPACK_INDEX_DIR]."),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="Embedding model name or path, or 'hash' [env: WINDOWPACK_EMBEDDER]."),
    ] = None,
    log_level: Annotated[
        LogLevel | None,
        typer.Option(help="Server log level; at info every request is logged [env: ...; info]."),
    ] = None,
    access_log: Annotated[
        bool | None, typer.Option(help="Log every request, at info [env: WINDOWPACK_ACCESS_LOG].")
    ] = None,
    warm_up: Annotated[
        bool | None,
        typer.Option(
            help="Load the model and every collection's indexes at start, in the background; "
            "/readyz answers 200 once done [env: WINDOWPACK_WARM_UP; on]."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Job workers in the server's process; 0 when `windowpack worker` processes "
            "run the ingest jobs [env: WINDOWPACK_WORKERS; 1]."
        ),
    ] = None,
    mcp: Annotated[
        bool,
        typer.Option(
            "--mcp",
            envvar="WINDOWPACK_MCP",
            help="Also serve the MCP server (streamable HTTP, stateless) at /mcp, with the "
            "API's keys and limits; needs the `mcp` extra.",
        ),
    ] = False,
) -> None:
    """Serve the REST API (docs at /docs, inspector at /ui); beyond 127.0.0.1 only with keys.

    Each setting comes from its flag, else from its WINDOWPACK_* environment variable, else
    from its default: a flag left out never hides the environment.
    """
    from windowpack.api import serve as run_server

    flags = {
        "store": store,
        "host": host,
        "port": port,
        "index_dir": index_dir,
        "embedder": embedder,
        "log_level": log_level,
        "access_log": access_log,
        "warm_up": warm_up,
        "workers": workers,
    }
    settings = _server_settings({name: value for name, value in flags.items() if value is not None})
    if not mcp:
        run_server(settings)
        return
    from windowpack.mcp_server import MCP_PATH, mount

    print(f"MCP server (streamable HTTP): {settings.base_url}{MCP_PATH}", flush=True)
    run_server(settings, extend=mount)


def _server_settings(flags: dict[str, object]) -> ApiSettings:
    """The server's settings: `flags` given, the environment for the rest; a bad value is an
    error naming the setting and its environment variable."""
    import pydantic

    from windowpack.api import ApiSettings

    try:
        return ApiSettings(**flags)  # type: ignore[arg-type]
    except pydantic.ValidationError as error:
        problem = error.errors()[0]
        name = ".".join(str(part) for part in problem["loc"])
        raise InvalidArgumentError(
            f"--{name.replace('_', '-')} / WINDOWPACK_{name.upper()}", problem["msg"]
        ) from None


def worker(
    store: Annotated[
        str, typer.Option(help="Store folder or database URL.", envvar="WINDOWPACK_STORE")
    ] = "wp-store",
    index_dir: Annotated[
        str | None,
        typer.Option(
            help="Index folder, needed with a database URL.", envvar="WINDOWPACK_INDEX_DIR"
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            help="Embedding model name or path, or 'hash': the server's.",
            envvar="WINDOWPACK_EMBEDDER",
        ),
    ] = None,
    attempts: Annotated[
        int,
        typer.Option(
            min=1,
            help="Runs of a job before an interruption (its worker killed) fails it.",
            envvar="WINDOWPACK_JOB_ATTEMPTS",
        ),
    ] = 3,
    poll_seconds: Annotated[
        float,
        typer.Option(
            min=0.01,
            help="Seconds between looks at the job table when nothing woke the worker "
            "(PostgreSQL wakes it at once; SQLite is looked at).",
        ),
    ] = 1.0,
    nice: Annotated[
        int,
        typer.Option(
            min=0,
            max=19,
            help="Nice value added to the worker's job thread: higher leaves more CPU to a "
            "server's readers on the machine and makes writes slower under load.",
        ),
    ] = 0,
) -> None:
    """Run the store's ingest jobs (those `windowpack serve` accepted) until Ctrl-C or SIGTERM.

    Run as many as you like, on this or other machines sharing the database: each takes one
    job at a time, and a job whose worker is killed is taken up again by another. The job in
    hand is finished before the worker stops.
    """

    from windowpack.config import StoreConfig
    from windowpack.jobs import JobQueue, Worker, WorkerSettings
    from windowpack.service import open as open_store

    _log_to_stderr()
    config = StoreConfig() if embedder is None else StoreConfig(embedder=embedder)
    with open_store(store, index_dir=index_dir, config=config, create=False) as opened:
        job_worker = Worker(
            JobQueue(opened),
            WorkerSettings(max_attempts=attempts, poll_seconds=poll_seconds, niceness=nice),
        )
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        typer.echo(f"worker {job_worker.name}: running jobs of {store}", err=True)
        job_worker.run(stop)
        typer.echo(f"worker {job_worker.name}: stopped", err=True)


def mcp(
    transport: Annotated[
        Literal["stdio", "http"],
        typer.Option(
            help="stdio: a client starts this command and talks on its stdin and stdout; "
            "http: serve streamable HTTP at /mcp (stateless: any replica answers any request)."
        ),
    ] = "stdio",
    store: Annotated[
        str | None, typer.Option(help="Store folder or database URL ($WINDOWPACK_STORE).")
    ] = None,
    index_dir: Annotated[
        str | None,
        typer.Option(help="Index folder, needed with a database URL ($WINDOWPACK_INDEX_DIR)."),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="Embedding model name or path, or 'hash' ($WINDOWPACK_EMBEDDER)."),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(help="http: address to listen on ($WINDOWPACK_HOST; 127.0.0.1)."),
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="http: port to listen on ($WINDOWPACK_PORT; 8000).")
    ] = None,
    key: Annotated[
        str | None,
        typer.Option(
            envvar="WINDOWPACK_API_KEY",
            help="stdio: act as this API key, held to its collections and rights (default: "
            "the local user, who may read and write every collection). Over http each "
            "request sends its own key.",
        ),
    ] = None,
) -> None:
    """Serve windowpack to agents over the Model Context Protocol: tools pack, search, add
    and collections, the summary tree as resources (docs/mcp.md; needs the `mcp` extra).

    Over http each request is held to the API's keys and limits, as over REST; the server
    listens beyond 127.0.0.1 only with keys.
    """
    flags = {"store": store, "index_dir": index_dir, "embedder": embedder}
    if transport == "http":
        if key is not None:
            raise InvalidArgumentError(
                "--key", "is for --transport stdio: over http each request sends its own key"
            )
        from windowpack.mcp_server import serve as serve_mcp

        given = {**flags, "host": host, "port": port}
        serve_mcp(
            _server_settings({name: value for name, value in given.items() if value is not None})
        )
        return
    for name, value in (("--host", host), ("--port", port)):
        if value is not None:
            raise InvalidArgumentError(name, "is for --transport http")
    from windowpack.mcp_server import run_stdio
    from windowpack.service import open as open_store

    settings = _server_settings({name: value for name, value in flags.items() if value is not None})
    with open_store(
        settings.store, index_dir=settings.index_dir, config=settings.store_config()
    ) as opened:
        run_stdio(opened, key=key)


def _log_to_stderr() -> None:
    """windowpack's log records (a job's progress lines, its failures) on stderr, one line each
    with its time, as `windowpack serve` writes them through uvicorn's handler."""
    import logging
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("windowpack")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
