"""Hostile and broken clients against the preview server: each gets 400/408/414/431/503 or a close, and the server
keeps serving everyone else. Runs against preview-harness, or against a running `colorcam live` when PREVIEW_URL
(e.g. http://127.0.0.1:8080/) is set. Loopback only.
"""
import ipaddress
import os
import socket
import time
import urllib.parse
import urllib.request

import pytest

from preview_harness import start_harness


@pytest.fixture(scope="module")
def server():
    url = os.environ.get("PREVIEW_URL")
    proc = None
    if not url:
        proc, url = start_harness("--seconds", "300")
    parsed = urllib.parse.urlparse(url)
    assert ipaddress.ip_address(socket.gethostbyname(parsed.hostname)).is_loopback, "loopback servers only"
    yield parsed.hostname, parsed.port
    if proc:
        proc.terminate()
        proc.communicate(timeout=20)
        assert proc.returncode == 0


def get(server, path):
    host, port = server
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=5) as response:
        return response.status, response.read()


def raw_exchange(server, payload, timeout=10):
    """Sends `payload`, returns everything the server sends until it closes."""
    with socket.create_connection(server, timeout=timeout) as sock:
        sock.sendall(payload)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk


def status_of(response):
    assert response.startswith(b"HTTP/1.1 "), f"not an HTTP response: {response[:60]!r}"
    return int(response.split(b" ", 2)[1])


def jpeg_size(data):
    """(width, height) from the first SOF marker; asserts SOI and EOI."""
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9", "not a whole JPEG"
    i = 2
    while i < len(data):
        assert data[i] == 0xFF, f"bad marker at {i}"
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    raise AssertionError("no SOF marker")


def test_endpoints_answer(server):
    assert get(server, "/healthz") == (200, b"ok\n")
    status, body = get(server, "/snapshot.jpg")
    assert status == 200 and jpeg_size(body) == (640, 480)
    status, body = get(server, "/metrics")
    assert status == 200 and b"# TYPE colorcam_frames_dropped_total counter" in body


@pytest.mark.parametrize("payload,expected", [
    (b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + b"x" * 40000 + b"\r\n\r\n", 431),
    (b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n", 431),
    (b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414),
    (b"HELLO\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\n\r\n", 400),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
    (b"GET / HTTP/9.9\r\nHost: a\r\n\r\n", 505),
], ids=["long-header", "many-headers", "long-target", "not-http", "no-host", "tls-bytes", "http-9.9"])
def test_malformed_requests_get_an_error_then_a_close(server, payload, expected):
    assert status_of(raw_exchange(server, payload)) == expected
    assert get(server, "/healthz")[0] == 200


def test_slowloris_clients_get_408_while_others_are_served(server):
    clients = []
    for _ in range(20):
        sock = socket.create_connection(server, timeout=15)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n")
        clients.append(sock)
    start = time.monotonic()
    served = 0
    while time.monotonic() - start < 3:
        for sock in clients:
            try:
                sock.sendall(b"X")  # one byte at a time, never finishing the head
            except OSError:
                pass
        assert get(server, "/healthz")[0] == 200
        served += 1
        time.sleep(0.5)
    assert served >= 4
    for sock in clients:
        data = b""
        while True:
            chunk = sock.recv(4096)  # the server answers within its header timeout (5 s) of the first byte
            if not chunk:
                break
            data += chunk
        sock.close()
        assert status_of(data) == 408
    assert time.monotonic() - start < 12


def test_thousand_connections_opened_and_dropped_leave_it_serving(server):
    for i in range(1000):
        sock = socket.create_connection(server, timeout=5)
        if i % 3 == 1:
            sock.sendall(b"GET /stream.mjpg HTTP/1.1\r\nHost: a\r\n\r\n")
        elif i % 3 == 2:
            sock.sendall(b"GET / HT")
        sock.close()
    assert get(server, "/healthz") == (200, b"ok\n")
    status, body = get(server, "/snapshot.jpg")
    assert status == 200 and jpeg_size(body) == (640, 480)


def test_connection_flood_gets_503_or_close_and_recovers(server):
    held = []
    try:
        for _ in range(300):
            held.append(socket.create_connection(server, timeout=5))
        time.sleep(0.5)
        refused = 0
        for sock in held[-40:]:
            sock.settimeout(0.2)
            try:
                data = sock.recv(4096)
                if data == b"" or status_of(data) == 503:
                    refused += 1
            except socket.timeout:
                pass
        assert refused > 0, "no connection beyond the limit was refused"
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 5
    while True:
        try:
            assert get(server, "/healthz")[0] == 200
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_out_of_descriptors_refuses_without_spinning_and_recovers():
    import resource

    proc, url = start_harness("--seconds", "60", "--fps", "5",
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48)))
    try:
        parsed = urllib.parse.urlparse(url)
        server = (parsed.hostname, parsed.port)
        held = [socket.create_connection(server, timeout=5) for _ in range(80)]  # more than the 48 descriptors
        time.sleep(0.5)
        before = cpu_seconds(proc.pid)
        time.sleep(2.0)
        used = cpu_seconds(proc.pid) - before
        assert used < 1.0, f"server used {used:.2f} CPU-s in 2 s while out of descriptors (spinning on accept?)"
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                assert get(server, "/healthz")[0] == 200
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "out of file descriptors" in err
