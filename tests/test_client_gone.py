"""`client_gone` as gunicorn's gevent workers call it: on a monkey-patched socket left blocking.
A long-poll asks it every GONE_CHECK_SECONDS; had the peek waited for the socket to become
readable, the long-poll would sleep until its client hung up, deaf to the move it waits for
(the cross-instance long-poll answered 20-40 s late). It runs in a process of its own, as
monkey-patching is for the whole process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

REPO = Path(__file__).parents[1]

PROBE = """
from gevent import monkey; monkey.patch_all()
import socket, sys, time
import gevent, orjson
from service.admission import client_gone

def timed(environ):
    started = time.monotonic()
    try:
        with gevent.Timeout(2):
            gone = client_gone(environ)
    except gevent.Timeout:
        gone = "blocked"
    return gone, time.monotonic() - started

served, client = socket.socketpair()
served.setblocking(True)  # as gunicorn's gevent worker leaves a client's socket
environ = {"gunicorn.socket": served}
idle, idle_seconds = timed(environ)
timeout_after = served.gettimeout()
client.sendall(b"GET / HTTP/1.1\\r\\n")  # a pipelined request: still there
pipelined, _ = timed(environ)
served.recv(64)
client.close()
hung_up, hung_up_seconds = timed(environ)
sys.stdout.write(orjson.dumps({"idle": idle, "idle_seconds": idle_seconds,
    "timeout_after": timeout_after, "pipelined": pipelined, "hung_up": hung_up,
    "hung_up_seconds": hung_up_seconds}).decode())
"""


def test_client_gone_answers_at_once_on_a_gevent_socket_whose_client_is_idle() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, timeout=60,
                          check=True)
    found = orjson.loads(done.stdout)
    assert found["idle"] is False and found["idle_seconds"] < 0.2
    assert found["timeout_after"] is None  # the socket is left blocking, as the worker set it
    assert found["pipelined"] is False
    assert found["hung_up"] is True and found["hung_up_seconds"] < 0.2
