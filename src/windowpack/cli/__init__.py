"""The `windowpack` command: thin commands over the facade (`windowpack.cli:main`).

`app` is the typer application; `app.py` holds the everyday commands (ingest, search, pack,
tree, demo) and registers the groups beside it (`collection_commands`, `key_commands`,
`eval_command`, `serve_command`). `options` holds the options every command shares and opens
the store, `output` prints, `progress` draws the ingest progress line, `questions` reads
`pack --questions FILE` and packs each question. Heavy imports (the
store, the API, the evals) happen inside the commands, so `windowpack --help` and a command
that only reads stay cheap.
"""

from __future__ import annotations

from windowpack.cli.app import app, main

__all__ = ["app", "main"]
