"""The preview's colour-hint API on `colorcam live --source` (the demo scene): GET /photos, POST/PUT/DELETE on a
photo's hints, the hints file, and every bad request answered 4xx with a reason — the daemon keeps running.
"""
import json
import signal
import socket
import subprocess
import urllib.error
import urllib.request

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_live(colorcam, scene, port, *extra):
    """`colorcam live --source SCENE` on 127.0.0.1:PORT; returns once the preview listens."""
    proc = subprocess.Popen([colorcam, "live", "--source", str(scene), "--listen", f"127.0.0.1:{port}",
                             *[str(e) for e in extra]], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "preview at" in line:
            return proc
    raise AssertionError(f"live exited {proc.wait()} before serving its preview")


def call(url, method, path, body=None, raw=None, content_type="application/json"):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url + path, method=method, data=data,
                                     headers={"Content-Type": content_type} if data is not None else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture(scope="module")
def live(colorcam, demo_scene, tmp_path_factory):
    hints_file = tmp_path_factory.mktemp("hints") / "hints.json"
    port = free_port()
    proc = start_live(colorcam, demo_scene[0], port, "--hints-file", hints_file)
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        status, text = call(url, "GET", "/photos")
        if status == 200 and len(json.loads(text)["photos"]) >= 2:
            break
        __import__("time").sleep(0.1)
    yield url, hints_file
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 0, err


def in_view(url):
    photos = [p for p in json.loads(call(url, "GET", "/photos")[1])["photos"] if p["inView"]]
    assert photos, "no photo in view"
    # The still print A (top left of the demo scene) is in view for the whole loop.
    return min(photos, key=lambda p: sum(x + y for x, y in p["corners"]))


def test_hints_are_added_moved_listed_removed_and_written(live):
    url, hints_file = live
    photo = in_view(url)
    cx = sum(x for x, _ in photo["corners"]) / 4
    cy = sum(y for _, y in photo["corners"]) / 4
    status, text = call(url, "POST", f"/photos/{photo['id']}/hints", {"x": cx, "y": cy, "color": "#3060c0"})
    assert status == 201, text
    hint = json.loads(text)["hints"][-1]
    assert hint["color"] == "#3060c0" and abs(hint["u"] - 0.5) < 0.05 and abs(hint["v"] - 0.5) < 0.05, hint
    status, text = call(url, "PUT", f"/photos/{photo['id']}/hints/{hint['id']}", {"u": 0.25, "v": 0.75})
    assert status == 200 and json.loads(text)["u"] == 0.25 and json.loads(text)["v"] == 0.75, text
    status, text = call(url, "POST", f"/photos/{photo['id']}/hints",
                        [{"u": 0.1, "v": 0.1, "color": "#ff0000"}, {"u": 0.9, "v": 0.9, "color": "#00ff00"}])
    assert status == 201 and len(json.loads(text)["hints"]) == 3, text
    listed = json.loads(call(url, "GET", f"/photos/{photo['id']}/hints")[1])
    assert [h["color"] for h in listed["hints"]] == ["#3060c0", "#ff0000", "#00ff00"], listed
    status, text = call(url, "DELETE", f"/photos/{photo['id']}/hints/{hint['id']}")
    assert status == 200 and [h["color"] for h in json.loads(text)["hints"]] == ["#ff0000", "#00ff00"], text
    for _ in range(50):  # written on its own queue
        saved = json.loads(hints_file.read_text()) if hints_file.exists() else {"photos": []}
        if [[h["color"] for h in p["hints"]] for p in saved["photos"]] == [["#ff0000", "#00ff00"]]:
            break
        __import__("time").sleep(0.1)
    assert saved["format"] == "colorcam-hints" and len(saved["photos"][0]["signature"]) == 1024, saved
    assert [[h["color"] for h in p["hints"]] for p in saved["photos"]] == [["#ff0000", "#00ff00"]], saved
    status, text = call(url, "DELETE", f"/photos/{photo['id']}/hints")
    assert status == 200 and json.loads(text)["hints"] == [], text


def test_suggestions_are_the_models_likely_colours_at_a_point(live):
    url, _ = live
    photo = in_view(url)
    cx = sum(x for x, _ in photo["corners"]) / 4
    cy = sum(y for _, y in photo["corners"]) / 4
    for query in (f"x={cx:.1f}&y={cy:.1f}", "u=0.25&v=0.75"):
        status, text = call(url, "GET", f"/photos/{photo['id']}/suggestions?{query}")
        assert status == 200, text
        got = json.loads(text)["suggestions"]
        probabilities = [s["probability"] for s in got]
        print(query, got)
        assert 1 <= len(got) <= 3 and probabilities == sorted(probabilities, reverse=True), got
        assert all(0 < p <= 1 for p in probabilities) and sum(probabilities) <= 1.001, got
        assert all(-128 <= s["a"] <= 127 and -128 <= s["b"] <= 127 for s in got), got
        # Distinct colours: no two within the merge distance (15 Lab units).
        assert all(((s["a"] - t["a"]) ** 2 + (s["b"] - t["b"]) ** 2) ** 0.5 >= 10 for i, s in enumerate(got)
                   for t in got[i + 1:]), got


@pytest.mark.parametrize("method,path,body,status,says", [
    ("POST", "/photos/9999/hints", {"u": 0.5, "v": 0.5, "color": "#ff0000"}, 404, "no photo 9999"),
    ("POST", "/photos/{id}/hints", {"x": 1, "y": 1, "color": "#ff0000"}, 422, "lies outside photo"),
    ("POST", "/photos/{id}/hints", {"x": -5000, "y": 1e9, "color": "#ff0000"}, 422, "lies outside photo"),
    ("POST", "/photos/{id}/hints", {"u": 1.5, "v": 0.5, "color": "#ff0000"}, 400, "fractions of the photo"),
    ("POST", "/photos/{id}/hints", {"u": 0.5, "v": 0.5, "color": "red"}, 400, "color wants"),
    ("POST", "/photos/{id}/hints", {"u": 0.5, "v": 0.5}, 422, "wants a place"),
    ("POST", "/photos/{id}/hints", {"u": 0.5, "v": 0.5, "colour": "#ff0000"}, 400, "unknown field"),
    ("POST", "/photos/{id}/hints", {"u": True, "v": 0.5, "color": "#ff0000"}, 400, "place is x and y"),
    ("POST", "/photos/{id}/hints", [], 422, "no hints"),
    ("POST", "/photos/{id}/hints", b"{\"u\": 0.5,", 400, "not JSON"),
    ("POST", "/photos/{id}/hints", [{"u": 0.5, "v": 0.5, "color": "#ff0000"}] * 40, 422, "at most 32"),
    ("POST", "/photos/{id}/hints", [{"u": 0.5, "v": 0.5, "color": "#ff0000"}] * 10000, 413, "at most 65536"),
    ("PUT", "/photos/{id}/hints/987654", {"u": 0.5, "v": 0.5}, 404, "has no hint 987654"),
    ("DELETE", "/photos/{id}/hints/987654", None, 404, "has no hint 987654"),
    ("POST", "/photos/{id}", {"u": 0.5, "v": 0.5, "color": "#ff0000"}, 404, "no such page"),
    ("PATCH", "/photos/{id}/hints", None, 405, "not allowed"),
    ("GET", "/photos/{id}/suggestions?x=1", None, 400, "the query wants"),
    ("GET", "/photos/{id}/suggestions?u=2&v=0", None, 400, "the query wants"),
    ("GET", "/photos/{id}/suggestions?x=1&y=1", None, 422, "lies outside photo"),
    ("GET", "/photos/9999/suggestions?u=0.5&v=0.5", None, 404, "no photo 9999"),
    ("POST", "/photos/{id}/suggestions", None, 405, "is not taken by"),
    ("POST", "/photos", None, 405, "is not taken by"),
])
def test_a_bad_hint_request_is_a_4xx_with_a_reason(live, method, path, body, status, says):
    url, _ = live
    path = path.replace("{id}", str(in_view(url)["id"]))
    raw = body if isinstance(body, bytes) else None
    got, text = call(url, method, path, body=None if raw else body, raw=raw)
    print(method, path, got, text.strip()[:120])
    assert got == status and says in text and "\n" not in text.strip(), (got, text)
    assert call(url, "GET", "/photos")[0] == 200  # still serving


def test_a_body_that_is_not_json_typed_is_refused(live):
    url, _ = live
    got, text = call(url, "POST", f"/photos/{in_view(url)['id']}/hints", raw=b"{}", content_type="text/plain")
    assert got == 415 and "application/json" in text, (got, text)
