"""Helpers for the API tests (imported by name: the test folders are not packages)."""

from __future__ import annotations

from pathlib import Path

from windowpack.api import ApiSettings

SEALS = "Harbour seals rest on sandbanks at low tide. " * 12
OWLS = "Barn owls hunt voles in the meadow at night. " * 12
FERRY = "The ferry to the island leaves at seven and returns at noon. " * 12


def settings_for(tmp_path: Path, **overrides: object) -> ApiSettings:
    """Settings for tests: uploads under the test's folder, small background threshold."""
    values: dict[str, object] = {"upload_dir": str(tmp_path / "uploads"), **overrides}
    return ApiSettings(**values)  # type: ignore[arg-type]


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def error_code(response: object) -> str:
    """The error code of a response, checking it has exactly the one error shape."""
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return str(body["error"]["code"])
