"""What routes receive by dependency: the app's shared parts and the caller's access."""

from __future__ import annotations

import time
from collections.abc import Callable
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
from windowpack.errors import InvalidArgumentError
from windowpack.jobs import IngestCall, JobRunner
from windowpack.service import Collection, Store


@dataclass(frozen=True)
class ApiContext:
    """One per app: the store loaded once and shared by every request, jobs, settings."""

    store: Store
    jobs: JobRunner
    settings: ApiSettings
    metrics: Metrics
    upload_dir: Path
    warm_up: WarmUp

    def ingest(
        self,
        collection: Collection,
        work: IngestCall,
        *,
        size: int,
        documents: int,
        background: bool | None,
        cleanup: Callable[[], None] | None = None,
    ) -> JSONResponse:
        """Run an ingest now (200 and its report) or as a job (202 and the job).

        `background=None` lets the size decide: past `background_above_bytes` it is a job.
        """
        if self.in_background(background, size):
            job = self.jobs.submit(
                collection.name, work, documents_total=documents, cleanup=cleanup
            )
            content = jsonable_encoder(JobOut.of(job))
            return JSONResponse(content, 202, headers={"Location": f"/v1/jobs/{job.id}"})
        started = time.perf_counter()
        try:
            report = work(lambda _progress: None)
        finally:
            if cleanup is not None:
                cleanup()
        self.metrics.ingest_finished("succeeded", report.tokens, time.perf_counter() - started)
        return JSONResponse(jsonable_encoder(report), 200)

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
