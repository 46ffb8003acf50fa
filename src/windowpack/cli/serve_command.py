"""`windowpack serve`: the REST API, its settings from flags and the environment."""

from __future__ import annotations

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
    }
    run_server(
        _server_settings({name: value for name, value in flags.items() if value is not None})
    )


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
