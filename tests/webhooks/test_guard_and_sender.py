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
