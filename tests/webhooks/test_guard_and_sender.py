"""The SSRF guard and the bounded sender, against real sockets on this machine."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from service.webhooks import addresses, sender
from service.webhooks.addresses import Refused


@pytest.mark.parametrize(
    "address, why",
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("192.168.1.1", "private"),
        ("172.16.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),
        ("100.64.0.1", "not public"),
        ("240.0.0.1", "reserved"),
    ],
)
def test_special_addresses_are_refused(address: str, why: str) -> None:
    assert addresses.refusal(ipaddress.ip_address(address)) == why


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert addresses.refusal(ipaddress.ip_address(address)) is None


def test_a_name_is_refused_if_any_of_its_addresses_is_private_unless_allowed() -> None:
    target = addresses.parse("https://hooks.example:8443/in?x=1")
    assert (target.host, target.port, target.path) == ("hooks.example", 8443, "/in?x=1")
    mixed = lambda host, port: ["93.184.216.34", "10.0.0.7"]  # noqa: E731
    with pytest.raises(Refused, match="10.0.0.7, a private address"):
        addresses.resolve(target, private_ok=False, resolver=mixed)
    assert addresses.resolve(target, private_ok=True, resolver=mixed) == ["93.184.216.34", "10.0.0.7"]
    slow = lambda host, port: time.sleep(1) or ["93.184.216.34"]  # noqa: E731
    with pytest.raises(Refused, match="did not resolve"):
        addresses.resolve(target, private_ok=False, resolver=slow, timeout=0.1)


class Server:
    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = self.server.server_port

    def close(self) -> None:
        self.server.shutdown()


def test_the_request_goes_to_the_checked_address_with_the_name_as_host_and_no_redirect() -> None:
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.headers["Host"]))
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = Server(Handler)
    try:
        # The name resolves (by the resolver the guard was given) to this machine: the request is
        # made to that very address, whatever the name would resolve to later.
        target = addresses.parse(f"http://hooks.example:{server.port}/in")
        [address] = addresses.resolve(target, private_ok=True, resolver=lambda h, p: ["127.0.0.1"])
        outcome = sender.post(target, address, b"{}", {}, timeout=2)
        assert outcome.status == 302 and not outcome.ok  # a redirect is a failure, not followed
        assert seen == [("/in", f"hooks.example:{server.port}")]
    finally:
        server.close()


def test_a_slow_or_endless_answer_is_cut_off_in_time() -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                if self.path == "/endless":
                    self.send_response(200)
                    self.end_headers()
                    while True:  # an answer that never ends
                        self.wfile.write(b"x" * 65536)
                else:  # headers dripped a byte at a time
                    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.05)
            except OSError:
                return  # the sender hung up, as it should

        def log_message(self, *args: object) -> None:
            return

    server = Server(Handler)
    try:
        endless = addresses.parse(f"http://127.0.0.1:{server.port}/endless")
        outcome = sender.post(endless, "127.0.0.1", b"{}", {}, timeout=3, max_response_bytes=4096)
        assert outcome.ok and outcome.seconds < 1.5  # 4 KB read, the rest never
        drip = addresses.parse(f"http://127.0.0.1:{server.port}/drip")
        started = time.monotonic()
        outcome = sender.post(drip, "127.0.0.1", b"{}", {}, timeout=0.5)
        assert outcome.status is None and outcome.error == "timeout"
        assert time.monotonic() - started < 1.0
    finally:
        server.close()


def test_a_closed_port_is_a_failure_not_an_exception() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = sender.post(addresses.parse(f"http://127.0.0.1:{port}/"), "127.0.0.1", b"{}", {}, timeout=1)
    assert outcome.status is None and outcome.error


@pytest.mark.parametrize("framing", ["HTTP/1.0", "Connection: close", "chunked"])
def test_an_answer_dripped_after_its_headers_is_cut_off_at_the_deadline_and_is_no_delivery(
    framing: str,
) -> None:
    """However the answer is framed (HTTP/1.0, Connection: close, chunks), its body dripped a
    byte at a time is cut off when the delivery's time is up, and counts as a timeout."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0" if framing == "HTTP/1.0" else "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                self.send_response(200)
                if framing == "Connection: close":
                    self.send_header("Connection", "close")
                if framing == "chunked":
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for _ in range(200):
                    self.wfile.write(b"1\r\nx\r\n" if framing == "chunked" else b"x")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                return  # the sender hung up, as it should

        def log_message(self, *args: object) -> None:
            return

    server = Server(Handler)
    try:
        target = addresses.parse(f"http://127.0.0.1:{server.port}/drip")
        started = time.monotonic()
        outcome = sender.post(target, "127.0.0.1", b"{}", {}, timeout=0.5)
        assert outcome.status is None and not outcome.ok and outcome.error == "timeout"
        assert time.monotonic() - started < 1.0
    finally:
        server.close()


def test_the_answer_read_is_capped_whatever_its_framing() -> None:
    sent: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"x" * 65536)
                    sent.append(65536)
            except OSError:
                return

        def log_message(self, *args: object) -> None:
            return

    server = Server(Handler)
    try:
        target = addresses.parse(f"http://127.0.0.1:{server.port}/big")
        outcome = sender.post(target, "127.0.0.1", b"{}", {}, timeout=3, max_response_bytes=4096)
        assert outcome.ok and outcome.seconds < 1.0
    finally:
        server.close()


def test_abort_cuts_off_the_requests_in_flight() -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            time.sleep(5)  # never answers in time

        def log_message(self, *args: object) -> None:
            return

    server = Server(Handler)
    abort = sender.Abort()
    outcomes: list[sender.Outcome] = []
    try:
        target = addresses.parse(f"http://127.0.0.1:{server.port}/slow")
        thread = threading.Thread(target=lambda: outcomes.append(
            sender.post(target, "127.0.0.1", b"{}", {}, timeout=10, abort=abort)))
        thread.start()
        time.sleep(0.3)
        started = time.monotonic()
        abort.all()
        thread.join(2)
        assert not thread.is_alive() and time.monotonic() - started < 0.5
        assert outcomes[0].status is None and outcomes[0].error == "aborted"
    finally:
        server.close()


@pytest.mark.parametrize("port", [0, 22, 25, 111, 6379, 5432, 2379, 10250])
def test_port_zero_and_internal_service_ports_are_refused(port: int) -> None:
    # urllib reads ":0" as port 0, which a connection would have made 80.
    with pytest.raises(Refused, match=f"not {port}"):
        addresses.parse(f"https://hooks.example:{port}/in")


@pytest.mark.parametrize("url, port", [("https://h.example/", 443), ("http://h.example/", 80),
                                       ("http://h.example:80/", 80), ("https://h.example:8443/", 8443)])
def test_web_ports_pass(url: str, port: int) -> None:
    assert addresses.parse(url).port == port
