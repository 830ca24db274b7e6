"""Hostile connections against the service under gunicorn (gevent workers): long-polls whose
clients hang up at once, one address opening stream after stream, request bodies dripped a byte
at a time, and a crowd holding every slot; meanwhile `/v1/health` answers within 100 ms."""

from __future__ import annotations

import socket
import time

import requests

GAME = {"map": "rust_belt", "players": [{"name": n} for n in ("Ada", "Brunel", "Cugnot")]}


def new_game(base: str) -> str:
    response = requests.post(f"{base}/v1/games", json=GAME, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()["game_id"]


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def send(base: str, request: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port_of(base)), timeout=10)
    sock.sendall(request)
    return sock


def long_poll(game_id: str) -> bytes:
    return (f'GET /v1/games/{game_id} HTTP/1.1\r\nHost: x\r\nIf-None-Match: "0"\r\n'
            f"Prefer: wait=60\r\n\r\n").encode()


def stream(game_id: str) -> bytes:
    return f"GET /v1/games/{game_id}/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode()


def status_of(sock: socket.socket) -> int:
    head = b""
    while b"\r\n" not in head:
        part = sock.recv(1024)
        if not part:
            break
        head += part
    return int(head.split(b" ", 2)[1])


def health_ms(base: str) -> float:
    started = time.monotonic()
    response = requests.get(f"{base}/v1/health", timeout=5)
    assert response.status_code == 200
    return (time.monotonic() - started) * 1000


def test_long_polls_whose_clients_hang_up_free_their_slots_at_once(services, redis_url: str) -> None:
    # 60 slots; one address may hold them all (the caps per address are tested below).
    [service] = services(redis_url, 1, WEB_CONCURRENCY="1", GUNICORN_WORKER_CONNECTIONS="60",
                         AOS_MAX_WAITS_PER_ADDRESS="1000", AOS_MAX_REQUESTS_PER_ADDRESS="1000")
    game_id = new_game(service.url)
    for _ in range(3):  # 150 long-polls of 60 s, each closed as soon as sent
        for _ in range(50):
            send(service.url, long_poll(game_id)).close()
        time.sleep(1.5)
    # Had the hung-up long-polls kept their slots (60 s each), these would find none.
    held = [send(service.url, long_poll(game_id)) for _ in range(40)]
    try:
        time.sleep(0.5)
        for sock in held:
            sock.settimeout(0.2)
            try:
                answered = sock.recv(1)
            except TimeoutError:
                answered = b""
            assert answered == b"", "a long-poll answered at once: it found no slot"
        assert max(health_ms(service.url) for _ in range(10)) < 100
    finally:
        for sock in held:
            sock.close()


def test_one_address_cannot_hold_every_stream_and_health_answers(services, redis_url: str) -> None:
    [service] = services(redis_url, 1, WEB_CONCURRENCY="1", AOS_MAX_WAITS_PER_ADDRESS="16")
    game_id = new_game(service.url)
    opened = [send(service.url, stream(game_id)) for _ in range(300)]
    try:
        statuses = [status_of(sock) for sock in opened]
        assert statuses.count(200) == 16
        assert statuses.count(429) == 300 - 16
        refused = requests.get(f"{service.url}/v1/games/{game_id}/events", timeout=5,
                               headers={"Accept": "text/event-stream"})
        assert refused.status_code == 429 and refused.json()["code"] == "TOO_MANY_WAITS"
        assert refused.headers["Retry-After"] == "1"
        # A refused connection is closed by the service: the client holds nothing.
        sock = send(service.url, stream(game_id))
        answer = b""
        while part := sock.recv(4096):
            answer += part
        sock.close()
        assert answer.startswith(b"HTTP/1.1 429") and b"TOO_MANY_WAITS" in answer
        assert max(health_ms(service.url) for _ in range(10)) < 100
    finally:
        for sock in opened:
            sock.close()


def test_a_body_dripped_a_byte_a_second_is_dropped_after_the_deadline(services, redis_url: str) -> None:
    [service] = services(redis_url, 1, WEB_CONCURRENCY="1", AOS_BODY_TIMEOUT_SECONDS="1")
    game_id = new_game(service.url)
    body = b'{"type": "issue_shares", "count": 0}'
    sock = send(service.url, (f"POST /v1/games/{game_id}/moves HTTP/1.1\r\nHost: x\r\n"
                              f"Content-Type: application/json\r\nAuthorization: Bearer x\r\n"
                              f"Content-Length: {len(body)}\r\n\r\n").encode())
    started = time.monotonic()
    try:
        sock.settimeout(0.1)
        answer = b""
        for byte in body:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            try:
                answer += sock.recv(4096)
            except TimeoutError:
                continue
            if answer:
                break
        sock.settimeout(5)
        # The headers, then the problem body (it may come in a packet of its own).
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            part = sock.recv(4096)
            if not part:
                break
            answer += part
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"BODY_TIMEOUT" in answer or b"Connection: close" in answer
        assert time.monotonic() - started < 2.5
    finally:
        sock.close()


def test_health_answers_while_a_crowd_holds_every_slot(services, redis_url: str) -> None:
    [service] = services(redis_url, 1, WEB_CONCURRENCY="1", GUNICORN_WORKER_CONNECTIONS="60",
                         AOS_STREAMS_PER_WORKER="60",  # streams may take every connection
                         AOS_MAX_WAITS_PER_ADDRESS="1000", AOS_MAX_REQUESTS_PER_ADDRESS="1000")
    game_id = new_game(service.url)
    opened = [send(service.url, stream(game_id)) for _ in range(60)]
    try:
        statuses = [status_of(sock) for sock in opened]
        assert statuses.count(200) == 60
        busy = requests.get(f"{service.url}/v1/games/{game_id}", timeout=5)
        assert busy.status_code == 503 and busy.json()["code"] == "AT_CAPACITY"
        # The reserved path: answered by the worker itself while every slot is held.
        assert max(health_ms(service.url) for _ in range(10)) < 100
        assert requests.get(f"{service.url}/v1/health", timeout=5).json() == {"status": "ok"}
    finally:
        for sock in opened:
            sock.close()


def test_the_body_watchdog_calls_what_is_due_and_nothing_cancelled_on_one_thread() -> None:
    """The body deadlines' one thread (admission.Watchdog; a Timer per POST cost a thread start
    each): a deadline left set is called once, after its time, earlier deadlines first; a
    cancelled one never is, however many are armed meanwhile."""
    import threading

    from service.admission import Watchdog

    # No fixed sleeps between arming and checking: on a loaded machine the loop below has taken
    # over 0.3 s, so a deadline armed before it fell due before one armed after it.
    watchdog, called, times = Watchdog(), [], {}
    done = threading.Event()

    def call(name: str) -> None:
        times[name] = time.monotonic()
        called.append(name)
        if name == "late":
            done.set()

    before = threading.active_count()
    for n in range(1000):  # each due in 0.1 s, before the two below, and cancelled at once
        watchdog.cancel(watchdog.arm(0.1, lambda n=n: called.append(n)))
    armed = time.monotonic()
    late = watchdog.arm(0.6, lambda: call("late"))
    watchdog.arm(0.3, lambda: call("early"))
    assert threading.active_count() <= before + 1
    assert done.wait(10)
    time.sleep(0.1)  # anything else that would be called
    assert called == ["early", "late"]
    assert times["early"] - armed >= 0.3 and times["late"] - armed >= 0.6
    watchdog.cancel(late)  # too late: it was called, once
    time.sleep(0.1)
    assert called == ["early", "late"]
