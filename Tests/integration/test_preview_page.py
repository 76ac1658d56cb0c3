"""The live preview page in headless Chromium, against preview-harness (synthetic 640x480 frames at 30 fps).

Checks the page renders, its stats change between loads, the MJPEG image element shows moving video with the photo
outline drawn over it, and a lost device is announced. Needs Debian's `chromium` and ffmpeg (to read screenshots).
With PREVIEW_URL set (e.g. a running `colorcam live --source demo.y4m`), the first two tests run against it instead;
the outline check then needs a tracked photo in view.
"""
import os
import re
import shutil
import subprocess
import time

import pytest

import preview_harness
from conftest import run

VIDEO_BOX = (40, 120, 600, 480)  # x0, y0, x1, y1 inside the 640x480 <img> at the page's top left
WINDOW = (1000, 700)


@pytest.fixture(scope="module")
def chromium():
    exe = shutil.which("chromium")
    assert exe, "headless Chromium is required for the page test: apt-get install chromium"
    return exe


def start_harness(*extra):
    return preview_harness.start_harness("--seconds", "120", *extra)


@pytest.fixture(scope="module")
def harness_url():
    """preview-harness, or a running `colorcam live` when PREVIEW_URL (http://127.0.0.1:PORT/) is set."""
    if os.environ.get("PREVIEW_URL"):
        yield os.environ["PREVIEW_URL"]
        return
    proc, url = start_harness()
    yield url
    proc.terminate()
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, f"harness exited {proc.returncode}"
    assert "summary published=" in out


def headless(chromium, *args):
    return run(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               f"--window-size={WINDOW[0]},{WINDOW[1]}", *args, timeout=90)


def dump_dom(chromium, url):
    return headless(chromium, "--virtual-time-budget=3000", "--dump-dom", url).stdout


def cell(dom, cell_id):
    match = re.search(rf'id="{cell_id}">([^<]*)<', dom)
    assert match, f"no #{cell_id} in the page:\n{dom[:2000]}"
    return match.group(1)


def screenshot_rgb(chromium, url, path):
    headless(chromium, f"--screenshot={path}", url)
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    assert len(raw) == WINDOW[0] * WINDOW[1] * 3, f"screenshot {path} is not {WINDOW[0]}x{WINDOW[1]}"
    return raw


def pixels(raw, box):
    x0, y0, x1, y1 = box
    for y in range(y0, y1, 4):
        row = (y * WINDOW[0]) * 3
        for x in range(x0, x1, 4):
            i = row + x * 3
            yield raw[i], raw[i + 1], raw[i + 2]


def test_page_shows_stats_that_change(chromium, harness_url):
    first = dump_dom(chromium, harness_url)
    assert "<title>colorcam live</title>" in first
    assert '<img id="video" src="/stream.mjpg"' in first
    if not os.environ.get("PREVIEW_URL"):
        assert cell(first, "model") == "synthetic"
    assert re.search(r'id="status">live<', first), "status is not 'live'"
    for reason in ["superseded", "busy", "late", "driver_gap", "decode_error"]:
        assert f"drops: {reason}</td>" in first
    time.sleep(1.0)
    second = dump_dom(chromium, harness_url)
    seq1, seq2 = int(cell(first, "sequence")), int(cell(second, "sequence"))
    assert seq2 > seq1, f"frame number did not advance between loads: {seq1} then {seq2}"
    assert float(cell(second, "fps")) > 20, "output fps from /stats.json is not near 30"
    assert 'class="v">0<' in second  # drop counts rendered as numbers


def test_video_element_updates_and_outlines_are_drawn(chromium, harness_url, tmp_path, ffmpeg):
    shot1 = screenshot_rgb(chromium, harness_url, tmp_path / "a.png")
    time.sleep(1.0)
    shot2 = screenshot_rgb(chromium, harness_url, tmp_path / "b.png")
    video1 = list(pixels(shot1, VIDEO_BOX))
    video2 = list(pixels(shot2, VIDEO_BOX))
    lumas = [sum(p) / 3 for p in video1]
    assert max(lumas) - min(lumas) > 100, "video area is blank: the MJPEG image did not render"
    diff = sum(abs(a - b) for p, q in zip(video1, video2) for a, b in zip(p, q)) / (3 * len(video1))
    assert diff > 5, f"video area did not change between screenshots 1 s apart (mean abs diff {diff:.2f})"
    green = sum(1 for r, g, b in pixels(shot2, (12, 38, 652, 518)) if g > 200 and r < 120 and b < 120)
    assert green > 20, "no tracked-photo outline (green SVG polygon) over the video"


def test_device_loss_is_announced(chromium):
    proc, url = start_harness("--device-lost-after", "0.1")
    try:
        time.sleep(0.5)
        dom = dump_dom(chromium, url)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    assert 'id="banner" role="alert" class="shown"' in dom, "device-lost banner not shown"
    assert "camera lost: synthetic device unplugged" in dom
    assert re.search(r'id="status">device lost<', dom)


def best_output_fps(url, samples=6):
    """The highest output rate /stats.json reports over `samples` reads 0.3 s apart."""
    import json
    import urllib.request
    best = 0.0
    for _ in range(samples):
        time.sleep(0.3)
        best = max(best, json.loads(urllib.request.urlopen(url + "stats.json", timeout=2).read())["outputFps"])
    return best


@pytest.fixture(scope="module")
def live_url(colorcam, demo_scene, tmp_path_factory):
    """`colorcam live --source` on the demo recording with the default model (the product, not the harness)."""
    import socket
    import urllib.request
    scene, _ = demo_scene
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([colorcam, "live", "--source", scene, "--listen", f"127.0.0.1:{port}"],
                            stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(100):
        try:
            urllib.request.urlopen(url + "healthz", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(1.5)  # photos tracked and colorized
    yield url
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err


def test_live_page_shows_colorized_video_outlines_and_changing_stats(chromium, live_url, tmp_path, ffmpeg):
    first = dump_dom(chromium, live_url)
    assert cell(first, "model") == "colorcam-default"
    assert re.search(r'id="status">live<', first), "status is not 'live'"
    shot1 = screenshot_rgb(chromium, live_url, tmp_path / "a.png")
    time.sleep(1.0)
    second = dump_dom(chromium, live_url)
    shot2 = screenshot_rgb(chromium, live_url, tmp_path / "b.png")
    assert int(cell(second, "sequence")) > int(cell(first, "sequence"))
    assert float(cell(second, "fps")) > 0, "the page shows the output rate"
    # The rate itself is read with no browser running: starting headless Chromium takes both cores of a 2-core
    # machine for a moment, and the product drops frames rather than queue them (by design), so the rate shown
    # during a screenshot can dip well below 30 (seen: 16-27, the same with and without photo tracking's cost).
    assert best_output_fps(live_url) > 25, "output fps from /stats.json is not near 30 on an otherwise idle machine"
    video1, video2 = list(pixels(shot1, VIDEO_BOX)), list(pixels(shot2, VIDEO_BOX))
    diff = sum(abs(a - b) for p, q in zip(video1, video2) for a, b in zip(p, q)) / (3 * len(video1))
    assert diff > 0.5, f"video area did not change between screenshots 1 s apart (mean abs diff {diff:.2f})"
    # The outlines arrive with the page's first /stats.json poll; a screenshot can be taken before it returns.
    shots = [shot2]
    for attempt in range(3):
        green = sum(1 for r, g, b in pixels(shots[-1], (12, 38, 652, 518)) if g > 200 and r < 120 and b < 120)
        if green > 20:
            break
        shots.append(screenshot_rgb(chromium, live_url, tmp_path / f"c{attempt}.png"))
    assert green > 20, "no tracked-photo outline (green SVG polygon) over the video in 4 screenshots"
    # Colour: the demo's prints are black and white, the table grey (--background gray): any clearly coloured
    # pixels in the video come from the colorizer.
    # The looped recording has moments with prints sliding (shown grey): judge the best of the screenshots taken.
    for attempt in range(3):
        coloured = max(sum(1 for r, g, b in pixels(shot, VIDEO_BOX) if max(r, g, b) - min(r, g, b) > 25
                           and not (g > 200 and r < 120)) for shot in shots)
        if coloured > 200:
            break
        time.sleep(1.0)
        shots.append(screenshot_rgb(chromium, live_url, tmp_path / f"d{attempt}.png"))
    assert coloured > 200, f"only {coloured} coloured pixels in the video in {len(shots)} screenshots"
