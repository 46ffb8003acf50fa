"""Prometheus metrics of one app: requests, latencies, window-cache hits, versions, ingest.

Each app has its own registry, so several apps in one process (tests) do not collide.
Requests are labelled by route (its endpoint's name, `pack`), never by the raw path, so a
client cannot grow the label set.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from windowpack.service import Store
from windowpack.types import JobState

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """The app's metrics and the registry that renders them."""

    def __init__(self, store: Store, queued_jobs: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "windowpack_http_requests",
            "HTTP requests by method, route (endpoint name) and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "windowpack_http_request_seconds",
            "HTTP request latency by method and route.",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        cache_hits = Gauge(
            "windowpack_window_cache_hits",
            "Packs answered from the window cache since the store was opened.",
            registry=self.registry,
        )
        cache_hits.set_function(lambda: store.window_cache_hits)
        self.ingested_tokens = Counter(
            "windowpack_ingest_tokens",
            "Tokens ingested by finished ingests.",
            registry=self.registry,
        )
        self.ingest_seconds = Counter(
            "windowpack_ingest_seconds",
            "Wall time of finished ingests (tokens / seconds = throughput).",
            registry=self.registry,
        )
        self.jobs = Counter(
            "windowpack_ingest_jobs",
            "Finished ingest jobs by status.",
            ["status"],
            registry=self.registry,
        )
        self.registry.register(_IndexVersions(store))
        queued = Gauge(
            "windowpack_jobs_queued",
            "Ingest jobs accepted and not yet taken by a worker (every server on the store).",
            registry=self.registry,
        )
        queued.set_function(queued_jobs)

    def job_finished(self, job: JobState, seconds: float) -> None:
        self.ingest_finished(job.status, job.tokens, seconds)

    def ingest_finished(self, status: str, tokens: int, seconds: float) -> None:
        """Count one finished ingest, a job or a direct call."""
        self.jobs.labels(status=status).inc()
        self.ingested_tokens.inc(tokens if status == "succeeded" else 0)
        self.ingest_seconds.inc(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _IndexVersions(Collector):
    """The current index version of each collection, read at scrape time."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "windowpack_index_version", "Current index version by collection.", labels=["name"]
        )
        for name, version in self._store.index_versions().items():
            family.add_metric([name], version)
        yield family


class RequestMetrics:
    """ASGI middleware counting each request and timing it under its route template."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client sees if the app fails before starting a response

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = _route_template(scope)
            method = scope["method"]
            self.metrics.requests.labels(method=method, route=route, status=str(status)).inc()
            self.metrics.latency.labels(method=method, route=route).observe(
                time.perf_counter() - started
            )


def _route_template(scope: Scope) -> str:
    # The router leaves the route it matched in the (shared) scope. Its name (the endpoint
    # function: `pack`, `get_job`) is unique in the app, unlike its path inside a sub-router.
    return str(getattr(scope.get("route"), "name", "unmatched"))
