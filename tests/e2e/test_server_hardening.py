"""What a hostile client meets on the wire: gunicorn as deployed (deploy/gunicorn.conf.py), spoken
to through raw sockets, so that nothing between the test and the server tidies the request."""

from __future__ import annotations

import random
import socket
import string
from urllib.parse import urlsplit

import orjson
import pytest
import requests

LIMIT = 1 << 20


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def exchange(url: str, head: bytes, body_parts: list[bytes] = (), timeout: float = 30) -> bytes:
    """Send a request head and body bytes as given; read the whole answer (the server closes)."""
    with socket.create_connection(address(url), timeout=timeout) as sock:
        sock.sendall(head)
        for part in body_parts:
            try:
                sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and closed before the whole body was sent
        chunks = []
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


def parse(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def chunked(data: bytes, size: int = 65536) -> list[bytes]:
    pieces = [data[i : i + size] for i in range(0, len(data), size)]
    return [b"%x\r\n%b\r\n" % (len(piece), piece) for piece in pieces] + [b"0\r\n\r\n"]


def new_game(url: str) -> dict:
    body = {"map": "rust_belt", "players": [{"name": n} for n in ("Ada", "Bo", "Cy")], "seed": "wire"}
    response = requests.post(f"{url}/v1/games", json=body, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()


def post_move_chunked(url: str, game: dict, data: bytes) -> tuple[int, dict[str, str], bytes]:
    token = game["seats"][game["active_seat"]]["token"]
    head = (
        f"POST /v1/games/{game['game_id']}/moves HTTP/1.1\r\nHost: test\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    return parse(exchange(url, head, chunked(data)))


def test_a_chunked_body_over_the_limit_is_413_and_never_applied(service_url: str) -> None:
    game = new_game(service_url)
    move = b'{"type": "issue_shares", "count": 0}'
    data = move + b" " * (LIMIT - len(move)) + b"x" * (1_064_576 - LIMIT)
    status, headers, body = post_move_chunked(service_url, game, data)
    assert status == 413, body[:300]
    assert headers["content-type"] == "application/problem+json"
    assert orjson.loads(body)["code"] == "BODY_TOO_LARGE"
    view = requests.get(f"{service_url}/v1/games/{game['game_id']}", timeout=10).json()
    assert view["version"] == 0


def test_a_chunked_body_within_the_limit_is_applied(service_url: str) -> None:
    game = new_game(service_url)
    move = b'{"type": "issue_shares", "count": 0}'
    status, _, body = post_move_chunked(service_url, game, move + b" " * (LIMIT - len(move)))
    assert status == 200, body[:300]
    assert orjson.loads(body)["version"] == 1


# -- gunicorn's own answers ------------------------------------------------------------------


def assert_problem_from_gunicorn(raw: bytes, status: int, code: str) -> dict:
    got, headers, body = parse(raw)
    assert got == status, raw[:500]
    assert headers["content-type"] == "application/problem+json", raw[:500]
    assert headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers.get("server", "aos-rules") == "aos-rules"
    assert len(headers["x-request-id"]) == 32
    problem = orjson.loads(body)
    assert problem["status"] == status and problem["code"] == code
    assert problem["type"] == f"urn:aos:problem:{code}"
    return problem


CHUNKED = b"POST /v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
BAD_REQUESTS = [
    (b"GARBAGE\r\n\r\n", 400, "BAD_REQUEST_LINE"),
    (b"GET /v1/health HTTP/9.9\r\nHost: x\r\n\r\n", 400, "BAD_HTTP_VERSION"),
    (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "URI_TOO_LONG"),
    (b"GET /v1/health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", 400, "BAD_HEADER"),
    (b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX: " + b"y" * 9000 + b"\r\n\r\n", 431, "HEADERS_TOO_LARGE"),
    (b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 150 + b"\r\n", 431, "HEADERS_TOO_LARGE"),
    (CHUNKED + b"zz\r\n", 400, "BAD_CHUNKED_BODY"),
    (CHUNKED + b"5\r\nabcdefg", 400, "BAD_CHUNKED_BODY"),
    (b"POST /v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n", 501,
     "TRANSFER_CODING_UNSUPPORTED"),
]


@pytest.mark.parametrize("raw, status, code", BAD_REQUESTS, ids=[c for _, _, c in BAD_REQUESTS])
def test_gunicorns_own_errors_are_problems(service_url: str, raw: bytes, status: int, code: str) -> None:
    assert_problem_from_gunicorn(exchange(service_url, raw), status, code)


def test_gunicorns_html_is_gone_on_the_gevent_worker_too(gevent_url: str) -> None:
    assert_problem_from_gunicorn(exchange(gevent_url, b"GARBAGE\r\n\r\n"), 400, "BAD_REQUEST_LINE")
    response = requests.get(f"{gevent_url}/v1/health", timeout=10)
    assert response.status_code == 200 and response.headers["Server"] == "aos-rules"


# -- what every answer carries -------------------------------------------------------------------


def test_every_answer_has_the_security_headers_and_no_banner(service_url: str) -> None:
    game = new_game(service_url)
    answers = {
        "json": requests.get(f"{service_url}/v1/games/{game['game_id']}", timeout=10),
        "problem": requests.get(f"{service_url}/v1/games/nope", timeout=10),
        "svg": requests.get(f"{service_url}/v1/games/{game['game_id']}/board.svg", timeout=10),
        "yaml": requests.get(f"{service_url}/v1/openapi.yaml", timeout=10),
    }
    for kind, response in answers.items():
        assert response.headers["X-Content-Type-Options"] == "nosniff", kind
        assert response.headers["Server"] == "aos-rules", kind
        csp = response.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp, (kind, csp)
    assert "frame-ancestors 'none'" in answers["json"].headers["Content-Security-Policy"]


# -- the metrics port ----------------------------------------------------------------------------


def test_metrics_are_served_by_the_master_on_their_own_port(service_url: str, metrics_url: str) -> None:
    assert requests.get(f"{service_url}/metrics", timeout=10).status_code == 404
    for _ in range(12):  # spread over the workers
        requests.get(f"{service_url}/v1/health", timeout=10)
    response = requests.get(metrics_url, timeout=10)
    assert response.status_code == 200 and response.headers["Server"] == "aos-rules"
    counted = [
        line for line in response.text.splitlines()
        if line.startswith('aos_http_requests_total{method="GET",route="/v1/health",status="200"}')
    ]  # fmt: skip
    assert counted and float(counted[0].split()[-1]) >= 12


def test_random_methods_leave_the_metrics_small(service_url: str, metrics_url: str) -> None:
    before = len(requests.get(metrics_url, timeout=10).content)
    rng = random.Random(5)
    with requests.Session() as session:
        for _ in range(500):
            method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 20)))
            session.request(method, f"{service_url}/v1/health", timeout=10)
    after = len(requests.get(metrics_url, timeout=10).content)
    assert after - before < 4096, (before, after)
