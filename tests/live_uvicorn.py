"""A real uvicorn server on a thread of the test's process, on a free loopback port (imported
by name by the helpers of tests/api, tests/mcp_server and tests/reliability)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served(
    app_on: Callable[[int], Any], *, log_level: str = "warning", **options: Any
) -> Iterator[int]:
    """`app_on(port)` served by uvicorn on a free loopback port until the block ends: the
    port. In this process, so a test can fill the store directly and check the answers.
    `options` go to `uvicorn.Config` (`http=`: the server's protocol with its deadlines)."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(
        app_on(port), host="127.0.0.1", port=port, log_level=log_level, **options
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # only catches a hang: a loaded machine starts late
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)
