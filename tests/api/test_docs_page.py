"""/v1/docs: Swagger UI, served by the service itself, shows every operation of the contract in a
real browser (headless Chromium), with no request leaving the service's origin."""

from __future__ import annotations

from pathlib import Path

from service.api import create_app
from service.store import MemoryStore
from tests.contract import parsed_contract

SPEC = parsed_contract()
OPERATIONS = [
    (method.upper(), path, op)
    for path, item in SPEC["paths"].items()
    for method, op in item.items()
    if method in ("get", "post", "put", "patch", "delete")
]


def test_the_page_and_its_assets_are_served_by_the_app(api) -> None:  # type: ignore[no-untyped-def]
    page = api.client.get("/v1/docs")
    assert page.status_code == 200 and page.content_type.startswith("text/html")
    html = page.get_data(as_text=True)
    assert "https://" not in html and "http://" not in html  # nothing from a CDN
    assert "<script>" not in html  # no inline script: a strict CSP allows the page
    for asset in ("swagger-ui.css", "swagger-ui-bundle.js", "docs-init.js"):
        assert f'"docs/{asset}"' in html
        response = api.client.get(f"/v1/docs/{asset}")
        assert response.status_code == 200 and len(response.get_data()) > 100
        assert "max-age" in response.headers["Cache-Control"]
    assert api.client.get("/v1/docs/swagger-ui-bundle.js").content_type.startswith("application/javascript")
    missing = api.client.get("/v1/docs/index.js")
    assert missing.status_code == 404 and missing.get_json()["code"] == "NOT_FOUND"


def test_the_page_shows_every_operation_in_chromium(browser, live_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = live_server(create_app(store=MemoryStore()))
    page = browser.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    try:
        page.goto(url + "/v1/docs")
        page.wait_for_selector(".opblock", timeout=30000)
        shown = page.eval_on_selector_all(
            ".opblock",
            "blocks => blocks.map(b => [b.querySelector('.opblock-summary-method').textContent,"
            " b.querySelector('.opblock-summary-path').getAttribute('data-path')])",
        )
        title = page.text_content(".info .title")
        page.screenshot(path=str(tmp_path / "docs.png"))
        # An operation opens to its description.
        page.click("#operations-games-createGame .opblock-summary")
        page.wait_for_selector("#operations-games-createGame .opblock-description-wrapper", timeout=10000)
        described = page.text_content("#operations-games-createGame .opblock-description-wrapper")
        page.screenshot(path=str(tmp_path / "docs-open.png"))
    finally:
        page.close()
    assert (tmp_path / "docs.png").stat().st_size > 10_000  # a page was drawn
    assert "Age of Steam rules as a service" in (title or "")
    # The operations, and the deliveries of the contract's top-level `webhooks`, named by event.
    callbacks = [[method.upper(), name] for name, item in SPEC.get("webhooks", {}).items() for method in item]
    assert sorted(shown) == sorted([[method, path] for method, path, _ in OPERATIONS] + callbacks)
    assert "creates a new game" in (described or "")
    elsewhere = [r for r in requested if not r.startswith(url)]
    assert requested and not elsewhere, elsewhere


def test_every_schema_and_operation_is_described_with_an_example() -> None:
    from jsonschema import Draft202012Validator

    root = {"components": SPEC["components"]}
    for name, schema in SPEC["components"]["schemas"].items():
        assert schema.get("description", "").strip(), f"{name} has no description"
        assert "example" in schema, f"{name} has no example"
        errors = list(Draft202012Validator({**root, "$ref": f"#/components/schemas/{name}"})
                      .iter_errors(schema["example"]))
        assert not errors, f"{name}'s example: {errors[0].message}"
    for method, path, op in OPERATIONS:
        assert op.get("summary") and op.get("description", "").strip(), f"{method} {path}"
        for param in op.get("parameters", []):
            if "$ref" in param:
                param = SPEC["components"]["parameters"][param["$ref"].rsplit("/", 1)[1]]
            assert param.get("description"), f"{method} {path} {param['name']}"
        body = op.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            ref = body["schema"]["$ref"]
            for example in body.get("examples", {}).values():
                errors = list(Draft202012Validator({**root, "$ref": ref}).iter_errors(example["value"]))
                assert not errors, f"{method} {path}: {errors[0].message}"


def test_the_page_may_not_be_framed_and_runs_only_its_own_scripts(api) -> None:  # type: ignore[no-untyped-def]
    response = api.client.get("/v1/docs")
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    assert response.headers["X-Frame-Options"] == "DENY"
