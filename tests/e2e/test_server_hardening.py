"""What a hostile client meets on the wire: gunicorn as deployed (deploy/gunicorn.conf.py), spoken
to through raw sockets, so that nothing between the test and the server tidies the request."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import orjson
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
