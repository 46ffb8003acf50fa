"""What routes receive by dependency: the app's shared parts and the caller's access."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from windowpack.api.access import Access, Caller, authenticate
from windowpack.api.metrics import Metrics
from windowpack.api.schemas import CHUNK_TOKENS, JobOut, Tokenizer
from windowpack.api.settings import ApiSettings
from windowpack.api.warm_up import WarmUp
from windowpack.errors import InvalidArgumentError, from_code
from windowpack.jobs import JobInput, JobQueue, Worker
from windowpack.service import Collection, Store
from windowpack.types import JobState

# How soon a direct write first looks whether its job has ended, and the longest pause later.
_FIRST_LOOK_SECONDS = 0.005
_LAST_LOOK_SECONDS = 0.1


@dataclass(frozen=True)
class Write:
    """A write a route has checked and turned into a job's input."""

    collection: Collection
    job_input: JobInput
    background: bool
    request_hash: str


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

    async def ingest(self, prepare: Callable[[], Write], idempotency_key: str | None) -> Response:
        """Queue a write as a job and answer 202 with it, or (not `background`) wait for it
        and answer 200 with its report, or its error.

        Every write is a job, so an accepted one survives a restart and the work is done by
        whichever worker takes it. A retry with the same `idempotency_key` answers the job
        the first request made (its files are then not needed again). The wait holds no
        thread: a burst of writes waiting for their jobs leaves the threads to the readers.
        `prepare` (access checks, parsing the body, saving uploads) runs on a thread.
        """
        write = await run_in_threadpool(prepare)
        job = await run_in_threadpool(self._enqueue, write, idempotency_key)
        if write.background:
            content = jsonable_encoder(JobOut.of(job))
            return JSONResponse(content, 202, headers={"Location": f"/v1/jobs/{job.id}"})
        job = await self._ended(job.id)
        if job.error is not None:
            raise from_code(job.error.code, job.error.message)
        # Read your writes: a worker in another process wrote this version; have it here.
        collection = write.collection
        await run_in_threadpool(
            self.store.indexes.current, collection.collection_id, wait=True, name=collection.name
        )
        return JSONResponse(jsonable_encoder(job.report), 200)

    def _enqueue(self, write: Write, idempotency_key: str | None) -> JobState:
        try:
            job, created = self.jobs.enqueue(
                write.collection,
                write.job_input,
                idempotency_key=idempotency_key,
                request_hash=write.request_hash,
            )
        except BaseException:
            write.job_input.cleanup()
            raise
        if not created:
            write.job_input.cleanup()
        self.start_workers()
        return job

    async def _ended(self, job_id: str) -> JobState:
        """The job once it has ended, looked at from the event loop with a growing pause."""
        pause = _FIRST_LOOK_SECONDS
        while not (job := await run_in_threadpool(self.jobs.get, job_id)).done:
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, _LAST_LOOK_SECONDS)
        return job

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


@dataclass(frozen=True)
class NewCollection:
    """What an add says of a collection that does not exist: whether to create it (`create`:
    a first write creates it, as in the library; false for a caller that saw it exist, so a
    write after a delete is a 404, as a library handle's is), and its settings, as
    `Store.collection(name, tokenizer=..., chunk_tokens=...)` takes them: checked against an
    existing collection's (409 when they differ), the server's defaults when not given."""

    create: bool
    tokenizer: str | None
    chunk_tokens: int | None

    def target(self, access: Access, name: str) -> Collection:
        """The collection the add writes to (`Access.add_target`, or `write` when it must
        exist)."""
        if not self.create:
            return access.write(name)
        return access.add_target(name, tokenizer=self.tokenizer, chunk_tokens=self.chunk_tokens)


def new_collection(
    create: Annotated[
        bool,
        Query(
            description="Create the collection if it does not exist (its first write, as in "
            "the library); false: it must exist (404 otherwise)."
        ),
    ] = True,
    tokenizer: Annotated[
        Tokenizer | None,
        Query(description="The tokenizer of a collection this write creates."),
    ] = None,
    chunk_tokens: Annotated[
        int | None,
        Query(
            ge=CHUNK_TOKENS[0],
            le=CHUNK_TOKENS[1],
            description="The chunk size of a collection this write creates.",
        ),
    ] = None,
) -> NewCollection:
    return NewCollection(create=create, tokenizer=tokenizer, chunk_tokens=chunk_tokens)


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
NewCollectionDep = Annotated[NewCollection, Depends(new_collection)]
AccessDep = Annotated[Access, Depends(get_access)]
