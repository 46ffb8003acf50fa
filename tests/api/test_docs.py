"""The interactive docs and the inspector page are served from installed files only."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def _local_assets(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)


def test_docs_and_redoc_load_their_files_from_this_server(client: TestClient) -> None:
    for page in ("/docs", "/redoc"):
        response = client.get(page)
        assets = _local_assets(response.text)
        assert response.status_code == 200 and assets, page
        assert "default-src 'self'" in response.headers["content-security-policy"]
        for asset in assets:
            assert asset.startswith("/static/docs/"), (page, asset)
            fetched = client.get(asset)
            assert fetched.status_code == 200 and len(fetched.content) > 1000, asset
        assert "/openapi.json" in response.text


def test_the_inspector_page_has_no_external_assets(client: TestClient) -> None:
    response = client.get("/ui")

    assert response.status_code == 200 and "window inspector" in response.text
    assert _local_assets(response.text) == ["data:,"]  # the empty favicon
    assert "http" not in re.sub(r"https?://(www\.)?w3\.org[^\"']*", "", response.text)
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
