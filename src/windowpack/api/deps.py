"""What routes receive by dependency: the app's shared parts and the caller's access."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from windowpack.api.access import Access, Caller, authenticate
from windowpack.api.metrics import Metrics
from windowpack.api.schemas import JobOut
from windowpack.api.settings import ApiSettings
from windowpack.api.warm_up import WarmUp
from windowpack.errors import InvalidArgumentError, from_code
from windowpack.jobs import JobInput, JobQueue, Worker
from windowpack.service import Collection, Store


@dataclass(frozen=True)
class ApiContext:
    """One per app: the store loaded once and shared by every request, jobs, settings.

    `workers` run jobs in this process (none when `windowpack worker` processes do)."""

    store: Store
    jobs: JobQueue
    workers: tuple[Worker, ...]
    settings: ApiSettings
    metrics: Metrics
    upload_dir: Path
    warm_up: WarmUp

    def ingest(
        self,
        collection: Collection,
        job_input: JobInput,
        *,
        background: bool,
        idempotency_key: str | None,
        request_hash: str,
    ) -> JSONResponse:
        """Queue the ingest as a job and answer 202 with it, or (not `background`) wait for
        it and answer 200 with its report, or its error.

        Every write is a job, so an accepted one survives a restart and the work is done by
        whichever worker takes it. A retry with the same `idempotency_key` answers the job
        the first request made (its files are then not needed again).
        """
        try:
            job, created = self.jobs.enqueue(
                collection, job_input, idempotency_key=idempotency_key, request_hash=request_hash
            )
        except BaseException:
            job_input.cleanup()
            raise
        if not created:
            job_input.cleanup()
        self.start_workers()
        if background:
            content = jsonable_encoder(JobOut.of(job))
            return JSONResponse(content, 202, headers={"Location": f"/v1/jobs/{job.id}"})
        job = self.jobs.wait(job.id)
        if job.error is not None:
            raise from_code(job.error.code, job.error.message)
        # Read your writes: a worker in another process wrote this version; have it here.
        self.store.indexes.current(collection.collection_id, wait=True, name=collection.name)
        return JSONResponse(jsonable_encoder(job.report), 200)

    def start_workers(self) -> None:
        """Start this process's workers (again: nothing), which first recover orphaned jobs."""
        for worker in self.workers:
            worker.start()

    def close_workers(self) -> None:
        for worker in self.workers:
            worker.close()

    def in_background(self, background: bool | None, size: int) -> bool:
        """The client's choice, else whether the input is over `background_above_bytes`."""
        if background is not None:
            return background
        return size > self.settings.background_above_bytes

    def check_limit(self, argument: str, value: int, limit: int) -> None:
        """A client's size argument (budget, k, page) within the server's limit."""
        if value > limit:
            raise InvalidArgumentError(argument, f"must be at most {limit:,} on this server")


def get_api(request: Request) -> ApiContext:
    api: ApiContext = request.app.state.api
    return api


# Both declared as security schemes, so the interactive docs offer an "Authorize" button.
_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="The API key")


def get_access(
    request: Request,
    api: Annotated[ApiContext, Depends(get_api)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key_header)],
) -> Access:
    caller = Caller(
        key=bearer.credentials if bearer is not None else api_key,
        host=request.headers.get("host"),
        origin=request.headers.get("origin"),
    )
    return authenticate(api.store, caller, settings=api.settings)


ApiDep = Annotated[ApiContext, Depends(get_api)]
AccessDep = Annotated[Access, Depends(get_access)]
