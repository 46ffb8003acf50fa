"""The second audit's probes (issue 40), rerun against whichever windowpack is on the path.

    .venv/bin/python benchmarks/audit_probes.py                      # this tree
    PYTHONPATH=/tmp/wp-1641aee/src .venv/bin/python benchmarks/audit_probes.py   # another

A real uvicorn serves a small store (hash embedder) and each probe sends what the audit sent:
a session token of 100,000 `[` (D1), a real token edited to hold a lone surrogate (D2) or to
repeat chunk 0 in N follow-ups (D4), a filter value with a lone surrogate (D3), a `$and` of
100,000 clauses (D5), the CLI with a 1,000-deep `--where` (D6), a first write whose job is
given up after its worker died (D7), slow clients (D8), and the "also seen" requests. It
prints, per probe, the answer (status, exit code or outcome) and the seconds it took; a probe
the server did not answer within `--timeout` prints "no answer". With the tree's own code the
session probes are also sent signed with the store's secret (as if it leaked): that figure
is the cost of checking a token past its signature, bounded by the budget.

The server of this tree runs with `--head-timeout` and `--body-deadline` (5 s and 10 s by
default, so that the slow-client probes end in seconds; the server's defaults are 20 s and
120 s); a tree without those settings serves with uvicorn's own.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
from bench_common import add_smoke_option, write_results

import windowpack as wp
import windowpack.api as wp_api
import windowpack.service as wp_service
import windowpack.storage as wp_storage

Probe = tuple[str, str, float]
"""(name, answer, seconds)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    probes: list[Probe] = []
    with tempfile.TemporaryDirectory(prefix="wp-audit-") as folder:
        with _server(Path(folder), args) as (store, url):
            with httpx.Client(base_url=url, timeout=args.timeout) as client:
                probes += _http_probes(client, store, args)
            probes += _slow_client_probes(url, args)
            probes += _session_cost_probes(url, store, args)
        probes.append(_cli_probe(Path(folder)))
        probes.append(_job_probe(Path(folder)))
    width = max(len(name) for name, _, _ in probes)
    for name, answer, seconds in probes:
        print(f"{name:<{width}}  {answer:<40}  {seconds:8.2f} s", flush=True)
    figures = {
        name: {"answer": answer, "seconds": round(seconds, 3)} for name, answer, seconds in probes
    }
    print(f"results: {write_results('audit_probes', {'probes': figures})}", flush=True)
    return 0


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument(
        "--follow-ups", default="8000,16000,60000", help="D4: follow-ups repeating chunk 0"
    )
    parser.add_argument("--head-timeout", type=float, default=5.0)
    parser.add_argument("--body-deadline", type=float, default=10.0)
    parser.add_argument("--slow-cap", type=float, default=60.0, help="D8: give up after (s)")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.follow_ups, args.slow_cap, args.timeout = "200", 4.0, 30.0
        args.head_timeout, args.body_deadline = 1.0, 1.0
    return args


@contextlib.contextmanager
def _server(folder: Path, args: argparse.Namespace) -> Iterator[tuple[wp.Store, str]]:
    import uvicorn

    store = wp.open(folder / "store", config=wp.StoreConfig(embedder="hash", chunk_tokens=64))
    store.collection("docs").add(
        wp.Document(id=f"d{i}", text=f"Note {i}: otters guard the lantern. " * 20,
                    metadata={"team": ["ops", "data"][i % 2]})
        for i in range(20)
    )  # fmt: skip
    fields = wp_api.ApiSettings.model_fields
    values: dict[str, Any] = {"upload_dir": str(folder / "uploads")}
    options: dict[str, Any] = {}
    if "head_timeout_s" in fields:  # this tree: its deadlines, shortened
        values.update(head_timeout_s=args.head_timeout, body_deadline_s=args.body_deadline)
        options["http"] = wp_api.head_deadline_protocol(args.head_timeout)
    app = wp_api.create_app(wp_api.ApiSettings(**values), store=store)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield store, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        store.close()


def _timed(name: str, call: Callable[[], str]) -> Probe:
    started = time.perf_counter()
    try:
        answer = call()
    except (httpx.TimeoutException, TimeoutError):
        answer = "no answer"
    return name, answer, time.perf_counter() - started


def _status(response: httpx.Response) -> str:
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    return f"{response.status_code} {error.get('code', '')}".strip()


def _post(client: httpx.Client, path: str, body: str) -> Callable[[], str]:
    headers = {"content-type": "application/json"}
    return lambda: _status(client.post(path, content=body.encode(), headers=headers))


def _real_token(client: httpx.Client) -> str:
    body = {"query": "Which otter guards the lantern?", "budget": 3000}
    answer = client.post("/v1/collections/docs/sessions/pack", json=body).json()
    return str(answer["session"])


def _edited(token: str, **fields: Any) -> str:
    """`token` with its payload's `fields` replaced, signature (if any) left as it was."""
    parts = token.split(".")
    index = 1 if len(parts) == 3 else 0
    payload = json.loads(base64.urlsafe_b64decode(parts[index] + "=="))
    payload.update(fields)
    parts[index] = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    return ".".join(parts)


def _http_probes(client: httpx.Client, store: wp.Store, args: argparse.Namespace) -> list[Probe]:
    session = "/v1/collections/docs/sessions/pack"
    token = _real_token(client)
    deep = base64.urlsafe_b64encode(b"[" * 100_000).decode()
    surrogate = '{"team": "\\ud800x"}'
    clauses = json.dumps({"$and": [{"team": f"t{i}"} for i in range(100_000)]})

    def ask(session_token: str, budget: int = 3000) -> str:
        return json.dumps({"query": "otters", "budget": budget, "session": session_token})

    probes = [
        _timed("D1 token of 100,000 '['", _post(client, session, ask(deep))),
        _timed("D2 token, first_query '\\ud800x'", _post(
            client, session, ask(_edited(token, first_query="\ud800x")))),
        _timed("D3 pack, where '\\ud800x'", _post(
            client, "/v1/collections/docs/pack",
            f'{{"query": "otters", "budget": 500, "where": {surrogate}}}')),
        _timed("D3 sessions/pack, where '\\ud800x'", _post(
            client, session, f'{{"query": "otters", "budget": 500, "where": {surrogate}}}')),
        _timed("D5 pack, $and of 100,000", _post(
            client, "/v1/collections/docs/pack",
            f'{{"query": "otters", "budget": 500, "where": {clauses}}}')),
        _timed("D5 search, $and of 100,000", _post(
            client, "/v1/collections/docs/search", f'{{"query": "otters", "where": {clauses}}}')),
        _timed("delete: a filter keeping every document", lambda: _delete_all(client, store)),
        _timed("UTF-16 JSON body", lambda: _status(client.post(
            "/v1/collections/docs/search",
            content=json.dumps({"query": "otters"}).encode("utf-16"),
            headers={"content-type": "application/json"}))),
        _timed("/docs with Host: evil.com", lambda: _status(
            client.get("/docs", headers={"Host": "evil.com"}))),
        _timed("token replayed on another collection", lambda: _other_collection(client, store)),
        _timed("a normal follow-up", _post(client, session, ask(token))),
    ]  # fmt: skip
    for count in [int(n) for n in args.follow_ups.split(",")]:
        forged = _edited(token, added=[[[0]]] * count)
        probes.append(
            _timed(f"D4 {count:,} follow-ups of chunk 0", _post(client, session, ask(forged)))
        )
    return probes


def _delete_all(client: httpx.Client, store: wp.Store) -> str:
    store.collection("deletable").add([wp.Document(id=f"x{i}", text="A note.") for i in range(3)])
    body = '{"where": {"$not": {"team": "nobody"}}}'
    return _post(client, "/v1/collections/deletable/documents:delete", body)()


def _other_collection(client: httpx.Client, store: wp.Store) -> str:
    store.collection("other").add([wp.Document(id="o", text="Otters of another collection.")])
    token = _real_token(client)
    body = {"query": "otters", "budget": 3000, "session": token}
    answer = client.post("/v1/collections/other/sessions/pack", json=body)
    if answer.status_code != 200:
        return _status(answer)
    return f"200, extends={answer.json()['extends']}"


def _session_cost_probes(url: str, store: wp.Store, args: argparse.Namespace) -> list[Probe]:
    """This tree only: tokens signed with the store's own secret (as if it leaked)."""
    tokens_class = getattr(wp_service, "SessionTokens", None)
    if tokens_class is None:
        return []
    secret = wp_storage.StoreSecrets(store.sessions).get(wp_storage.SESSION_TOKENS)
    tokens = tokens_class(secret=secret)
    version = store.collection("docs").index_version
    probes = []
    with httpx.Client(base_url=url, timeout=args.timeout) as client:
        for count in [int(n) for n in args.follow_ups.split(",")]:
            payload = {"format": 1, "versions": [["docs", version]], "plan": [],
                       "first_query": "otters", "added": [[[0]]] * count}  # fmt: skip
            token = tokens.sign(json.dumps(payload).encode())
            body = json.dumps({"query": "otters", "budget": 3000, "session": token})
            name = f"D4 signed, {count:,} follow-ups"
            probes.append(_timed(name, _post(client, "/v1/collections/docs/sessions/pack", body)))
    return probes


def _slow_client_probes(url: str, args: argparse.Namespace) -> list[Probe]:
    port = int(url.rsplit(":", 1)[1])
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    post = (b"POST /v1/collections/docs/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n")  # fmt: skip
    return [
        _slow("D8 a header line every 1 s", port, head, [b"X-Slow: a\r\n"] * 1000, 1.0, args),
        _slow("D8 half a request line", port, b"GET /heal", [], 1.0, args),
        _slow("D8 body, a byte every 2 s", port, post, [b" "] * 1000, 2.0, args),
    ]


def _slow(
    name: str, port: int, head: bytes, pieces: list[bytes], every: float, args: argparse.Namespace
) -> Probe:
    """How long the server keeps a slow client's connection (up to `--slow-cap` seconds)."""
    started = time.perf_counter()
    sock = socket.create_connection(("127.0.0.1", port))
    stop = threading.Event()

    def trickle() -> None:
        for piece in pieces:
            if stop.wait(every):
                return
            with contextlib.suppress(OSError):
                sock.sendall(piece)

    sock.sendall(head)
    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    sock.settimeout(args.slow_cap)
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
        outcome = f"closed, {answer.split(b' ', 2)[1].decode() if answer else 'no answer'}"
    except (TimeoutError, ConnectionResetError) as error:
        outcome = "closed (reset)" if isinstance(error, ConnectionResetError) else "still open"
    stop.set()
    sock.close()
    return name, outcome, time.perf_counter() - started


def _cli_probe(folder: Path) -> Probe:
    deep = '{"$not": ' * 1000 + '{"team": "ops"}' + "}" * 1000
    command = [sys.executable, "-c", "from windowpack.cli import main; main()", "search", "x",
               "--store", str(folder / "store"), "--embedder", "hash", "--where", deep]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = len(done.stderr.strip().splitlines())
    answer = f"exit {done.returncode}, {lines} stderr line(s)"
    return "D6 CLI, 1,000-deep --where", answer, time.perf_counter() - started


def _job_probe(folder: Path) -> Probe:
    """D7: a first write whose job is given up after its worker died, as a kill leaves it."""
    from windowpack.jobs import DocumentsInput, JobQueue, Worker, WorkerSettings

    started = time.perf_counter()
    with wp.open(folder / "jobs", config=wp.StoreConfig(embedder="hash")) as store:
        queue = JobQueue(store)
        documents = DocumentsInput([wp.Document(id="a", text="A note about otters.")])
        job, _ = queue.enqueue(store.collection("fresh"), documents)
        assert queue.table.claim("a-killed-worker", 2**40) is not None
        store.create_collection("fresh")  # what the killed first write had made
        Worker(queue, WorkerSettings(max_attempts=1)).recover()
        state = queue.get(job.id)
        left = "left" if "fresh" in store.collections() else "none left"
        answer = f"{state.status} {state.error.code if state.error else ''}, collection {left}"
    return "D7 job_interrupted, first write", answer, time.perf_counter() - started


if __name__ == "__main__":
    raise SystemExit(main())
