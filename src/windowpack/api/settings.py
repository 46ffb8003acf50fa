"""Settings of the REST service, read from the environment (`WINDOWPACK_*`) in this one place."""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from windowpack.config import StoreConfig
from windowpack.types import MAX_BUDGET

MIB = 1024 * 1024


class ApiSettings(BaseSettings):
    """Where the store is, where to listen, and the limits every request is held to.

    `store` is a folder (the embedded default) or a database URL, which then needs
    `index_dir`. `require_keys` makes API keys mandatory even on loopback; they are mandatory
    anyway once a key was ever created in the store, even after every key is revoked, unless
    `allow_anonymous_after_revocation` says otherwise; binding beyond loopback without keys
    is refused.

    `window_cache_bytes` bounds the memory of cached windows; `snapshot_reads` (on) serves
    reads from the version loaded while a newer one loads (`StoreConfig`). A JSON body holds
    at most `max_json_values` values (objects, arrays, scalars) nested `max_json_depth` deep:
    parsed, a body takes many times its size (57 MiB of `{}` took 2.15 GB).
    """

    model_config = SettingsConfigDict(env_prefix="WINDOWPACK_", frozen=True)

    store: str = "wp-store"
    index_dir: str | None = None
    embedder: str | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    require_keys: bool = False
    # Fail-closed by default: a store that has had a key keeps requiring one. An operator who
    # revoked every key on purpose and wants anonymous loopback access back sets this.
    allow_anonymous_after_revocation: bool = False
    max_request_bytes: int = Field(default=64 * MIB, gt=0)
    max_json_values: int = Field(default=1_000_000, gt=0)
    # Well above what the schemas accept (metadata: MAX_METADATA_DEPTH), so that their errors
    # name the field; below what Python's recursive parser survives.
    max_json_depth: int = Field(default=512, gt=0)
    window_cache_bytes: int = Field(default=256 * MIB, gt=0)
    snapshot_reads: bool = True
    # Load the query model and every collection's indexes and packing state at start, in the
    # background (`api.warm_up`); `/readyz` answers 200 once done.
    warm_up: bool = True
    # Replicas on one database: seconds between checks for versions other processes wrote
    # (on PostgreSQL a NOTIFY wakes the check at once); 0 turns the watcher off.
    watch_interval_s: float = Field(default=1.0, ge=0)
    # Seconds a request body may go without a byte arriving before it is answered 408.
    body_timeout_s: float = Field(default=30.0, gt=0)
    # Seconds the whole body may take after its headers (a 64 MiB upload needs 0.55 MB/s).
    body_deadline_s: float = Field(default=120.0, gt=0)
    # Seconds a request's line and headers may take from the connection's start (or the
    # next request's first byte), before the server answers 408 and closes it.
    head_timeout_s: float = Field(default=20.0, gt=0)
    # An operator may lower the budget cap; the library's `MAX_BUDGET` is the most any has.
    max_budget: int = Field(default=MAX_BUDGET, gt=0, le=MAX_BUDGET)
    max_k: int = Field(default=1000, gt=0)
    max_page: int = Field(default=1000, gt=0)
    # Inputs larger than this run as a background job even when the client did not ask.
    background_above_bytes: int = Field(default=1 * MIB, gt=0)
    # Where uploaded files wait for their job (default: `uploads/` beside the store). Workers
    # on other machines read them there: a folder they all mount.
    upload_dir: str | None = None
    jobs_kept: int = Field(default=1000, gt=0)
    # Job workers in the server's process; 0 when `windowpack worker` processes run the jobs
    # (the server then does no ingest work: its CPU is the readers').
    workers: int = Field(default=1, ge=0)
    # Runs of a job before an interruption (its worker killed) fails it.
    job_attempts: int = Field(default=3, gt=0)
    # uvicorn's levels; at info (the default) every request is logged by its access log.
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = "info"
    access_log: bool = True

    def store_config(self) -> StoreConfig:
        """The options the server opens its store with."""
        config = StoreConfig(
            window_cache_bytes=self.window_cache_bytes,
            snapshot_reads=self.snapshot_reads,
            watch_interval_s=self.watch_interval_s or None,
        )
        return dataclasses.replace(config, embedder=self.embedder) if self.embedder else config

    @property
    def loopback_only(self) -> bool:
        """Whether `host` is reachable only from this machine."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"
