"""The preview's access token over real HTTP: `colorcam live --listen 0.0.0.0:PORT` (not loopback, so a token is
required) with --token-file and with a generated token, reached through 127.0.0.1; the token file's errors; and
headless Chromium logging in with the printed URL. Needs Debian's `chromium` for the last test."""
import http.client
import http.cookiejar
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import run
from test_preview_page import cell, headless

TOKEN = "file-Token_0123456789.abcdef~XYZ"
GUARDED = ["/", "/index.html", "/stream.mjpg", "/snapshot.jpg", "/stats.json", "/metrics", "/nope"]
LOGIN_URL = re.compile(r"preview login URL .*: http://([^/\s]+):(\d+)/\?token=([0-9a-f]+)\s*$")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def clip(colorcam, tmp_path_factory):
    path = tmp_path_factory.mktemp("access") / "clip.y4m"
    run(colorcam, "testclip", path, "--size", "160x120", "--seconds", "1")
    return path


class Live:
    """`colorcam live` on 0.0.0.0:PORT with a simulated model; stderr collected by a thread."""

    def __init__(self, colorcam, clip, *extra, listen_host="0.0.0.0"):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([colorcam, "live", "--source", clip, "--listen", f"{listen_host}:{self.port}",
                                      "--simulate-inference-ms", "5", "--simulate-mode", "sleep", *map(str, extra)],
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stderr.readline, "")),
                                       daemon=True)
        self.reader.start()
        for _ in range(100):
            try:
                status, _, _ = request(self.base, "/healthz")
                if status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"live did not serve /healthz: {self.stop()}")

    def stderr(self):
        return "".join(self.lines)

    def stop(self):
        """SIGTERM, then the exit status must be 0; returns stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        return self.stderr()


def printed_login(live):
    """(host, port, token) of the one login URL live printed (waiting up to 5 s: it follows the server's start)."""
    for _ in range(50):
        logins = [m for m in map(LOGIN_URL.search, list(live.lines)) if m]
        if logins:
            break
        time.sleep(0.1)
    assert len(logins) == 1, f"one login URL expected in:\n{live.stderr()}"
    return logins[0].groups()


def request(base, path, method="GET", headers=None):
    """One request with http.client (no redirects followed); returns (status, headers, body). A stream's body is
    not read (only its head)."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request(method, path, headers=headers or {})
        response = conn.getresponse()
        body = b"" if path.startswith("/stream.mjpg") and response.status == 200 else response.read()
        return response.status, response.headers, body
    finally:
        conn.close()


def assert_guarded(base, token):
    """Every path but /healthz: 401 without the token or with a wrong one, served with the right one (as a Bearer
    header and as the login cookie); a login redirects with the cookie; a wrong login is 401 with no cookie."""
    wrong = token[:-1] + ("x" if token[-1] != "x" else "y")
    for path in GUARDED:
        for headers in [{}, {"Authorization": f"Bearer {wrong}"}, {"Cookie": f"colorcam_token={wrong}"},
                        {"Authorization": f"Basic {token}"}, {"Cookie": f"other={token}"}]:
            status, got, body = request(base, path, headers=headers)
            assert status == 401, (path, headers, status)
            assert got["WWW-Authenticate"] == 'Bearer realm="colorcam"'
            assert got["Set-Cookie"] is None and b"Authorization: Bearer" in body
        status, got, body = request(base, path, method="HEAD")
        assert status == 401 and body == b"", (path, "HEAD")
    for headers in [{"Authorization": f"Bearer {token}"}, {"Cookie": f"lang=en; colorcam_token={token}"}]:
        status, got, body = request(base, "/", headers=headers)
        assert status == 200 and b"<title>colorcam live</title>" in body, headers
        status, got, jpeg = request(base, "/snapshot.jpg", headers=headers)
        assert status == 200 and jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"
        status, got, _ = request(base, "/stream.mjpg", headers=headers)
        assert status == 200 and got["Content-Type"].startswith("multipart/x-mixed-replace")
        assert request(base, "/stats.json", headers=headers)[0] == 200
        assert request(base, "/metrics", headers=headers)[0] == 200
        assert request(base, "/nope", headers=headers)[0] == 404
    status, got, _ = request(base, f"/?token={token}")
    assert status == 303 and got["Location"] == "/"
    assert got["Set-Cookie"] == f"colorcam_token={token}; Path=/; HttpOnly; SameSite=Lax"
    status, got, _ = request(base, f"/stats.json?a=1&token={token}")
    assert status == 303 and got["Location"] == "/stats.json?a=1"
    for target in [f"/?token={wrong}", "/?token=", f"/stats.json?token={token}0"]:
        status, got, _ = request(base, target, headers={"Cookie": f"colorcam_token={token}"})
        assert status == 401 and got["Set-Cookie"] is None and got["Location"] is None, target
    assert request(base, "/healthz")[0] == 200 and request(base, "/healthz", method="HEAD")[0] == 200
    metrics = request(base, "/metrics", headers={"Authorization": f"Bearer {token}"})[2].decode()
    rejected = [float(l.split()[-1]) for l in metrics.splitlines()
                if l.startswith('colorcam_preview_rejected_total{status="401"}')]
    assert rejected and rejected[0] == len(GUARDED) * 6 + 3, "every 401 is counted"


def test_token_file_guards_every_path_over_real_http(colorcam, clip, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN} \r\nsecond line is ignored\n")
    token_file.chmod(0o600)
    live = Live(colorcam, clip, "--token-file", token_file)
    try:
        assert_guarded(live.base, TOKEN)
    finally:
        err = live.stop()
    assert live.proc.returncode == 0, err
    assert TOKEN not in err, "a token from a file is never printed"
    assert f"needs the access token from {token_file}" in err
    assert "no authentication" not in err and "no access token" not in err


def test_token_file_on_loopback_turns_the_token_on(colorcam, clip, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    live = Live(colorcam, clip, "--token-file", token_file, listen_host="127.0.0.1")
    try:
        assert request(live.base, "/stats.json")[0] == 401
        assert request(live.base, "/stats.json", headers={"Authorization": f"Bearer {TOKEN}"})[0] == 200
    finally:
        err = live.stop()
    assert live.proc.returncode == 0, err


def test_generated_token_prints_a_login_url_that_works(colorcam, clip):
    live = Live(colorcam, clip)
    try:
        host, port, token = printed_login(live)
        assert int(port) == live.port and len(token) == 64, "256 bits, hex"
        assert host != "0.0.0.0", "a wildcard address is no use in a URL"
        assert_guarded(live.base, token)
        # What a browser does with the URL: follow the 303 with the cookie it set.
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with opener.open(f"{live.base}/?token={token}", timeout=5) as r:
            assert r.status == 200 and r.url == f"{live.base}/" and b"<title>colorcam live</title>" in r.read()
        assert [c.name for c in jar] == ["colorcam_token"]
        with opener.open(f"{live.base}/stats.json", timeout=5) as r:
            assert r.status == 200 and b'"sequence"' in r.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{live.base}/stats.json", timeout=5)
        assert refused.value.code == 401
    finally:
        err = live.stop()
    assert live.proc.returncode == 0, err
    assert err.count(token) == 1, "the token is printed once"
    assert "no authentication" not in err


@pytest.mark.parametrize("content,code,says", [
    (None, 66, "cannot open: No such file or directory"),
    ("", 65, "the first line is empty"),
    ("   \t\r\nnext-line-is-not-read-0123456789\n", 65, "the first line is empty"),
    ("short\n", 65, "has 5 characters; 16 to 256 are needed"),
    ("a token with spaces in it\n", 65, "has ' ' at byte 2"),
    ("directory", 66, "cannot read: Is a directory"),
])
def test_a_bad_token_file_is_one_line_naming_it(colorcam, clip, tmp_path, content, code, says):
    token_file = tmp_path / "token"
    if content == "directory":
        token_file.mkdir()
    elif content is not None:
        token_file.write_text(content)
    p = run(colorcam, "live", "--source", clip, "--listen", "0.0.0.0:0", "--token-file", token_file,
            "--simulate-inference-ms", "5", check=False, timeout=30)
    assert p.returncode == code, p.stderr
    assert p.stderr.count("\n") == 1 and f"--token-file {token_file}" in p.stderr and says in p.stderr, p.stderr


def test_help_explains_the_token(colorcam):
    text = run(colorcam, "live", "--help").stdout
    assert "--token-file FILE" in text and "Authorization: Bearer TOKEN" in text and "/?token=" in text
    assert "no authentication" not in text


@pytest.fixture(scope="module")
def chromium():
    exe = shutil.which("chromium")
    assert exe, "headless Chromium is required for the login test: apt-get install chromium"
    return exe


def test_browser_logs_in_with_the_printed_url_and_gets_the_live_page(colorcam, clip, chromium, tmp_path):
    live = Live(colorcam, clip)
    try:
        _, _, token = printed_login(live)
        profile = tmp_path / "profile"  # its own profile: the cookie lives here, nowhere else
        dom = headless(chromium, f"--user-data-dir={profile}", "--virtual-time-budget=3000", "--dump-dom",
                       f"{live.base}/?token={token}").stdout
        assert "<title>colorcam live</title>" in dom, f"not the page after the login redirect:\n{dom[:1000]}"
        assert cell(dom, "status") == "live", "the page's /stats.json polls were refused"
        assert int(cell(dom, "sequence")) >= 0 and float(cell(dom, "fps")) >= 0
        assert int(cell(dom, "streams")) >= 1, "the page's <img src=/stream.mjpg> was refused"
        # A fresh profile has no cookie: the same page is refused.
        refused = headless(chromium, f"--user-data-dir={tmp_path / 'fresh'}", "--dump-dom", f"{live.base}/").stdout
        assert "<title>colorcam live</title>" not in refused and "needs its access token" in refused
    finally:
        err = live.stop()
    assert live.proc.returncode == 0, err
