"""Liveness, readiness and metrics, outside `/v1`. Metrics name every collection, so when keys are
required only a key for every collection may read them."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from windowpack import __version__
from windowpack.api.access import keys_required
from windowpack.api.deps import AccessDep, ApiDep
from windowpack.api.metrics import CONTENT_TYPE
from windowpack.api.schemas import Health, Readiness

router = APIRouter(tags=["operations"])


@router.get("/healthz")
def healthz(api: ApiDep) -> Health:
    """`ok` when the database answers."""
    required = keys_required(api.store, api.settings)
    return Health(status="ok", version=__version__, keys_required=required)


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
def readyz(api: ApiDep) -> JSONResponse:
    """200 once the warm-up at start loaded every collection (or was turned off with
    `WINDOWPACK_WARM_UP=false`); 503 while it runs. The server answers meanwhile: a request
    waits only for what it needs that is still loading."""
    warm_up = api.warm_up
    body = Readiness(status="ready" if warm_up.ready else "warming", warmed=list(warm_up.warmed))
    return JSONResponse(body.model_dump(), status_code=200 if warm_up.ready else 503)


@router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE: {}}}})
def metrics(api: ApiDep, access: AccessDep) -> Response:
    """Prometheus metrics: requests, latencies, window-cache hits, index versions, ingest."""
    access.require_every_collection("/metrics")
    return Response(api.metrics.render(), media_type=CONTENT_TYPE)
