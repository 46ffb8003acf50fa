"""Ingest jobs: progress, outcome and per-file failures."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam

from windowpack.api.deps import AccessDep, ApiDep
from windowpack.api.schemas import JobOut
from windowpack.errors import JobNotFoundError

router = APIRouter(tags=["jobs"])


@router.get("/jobs/{job_id}")
def get_job(
    job_id: Annotated[str, PathParam(max_length=64)], access: AccessDep, api: ApiDep
) -> JobOut:
    """A job's status, stage and counts (documents, chunks, tokens), and files that failed."""
    job = api.jobs.get(job_id)
    if not access.can_see(job.collection):
        raise JobNotFoundError(job_id)  # the same answer as for an unknown id
    return JobOut.of(job)
