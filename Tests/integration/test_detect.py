"""colorcam detect / bench detect end to end: the JSON contract, clips, drawing, degenerate input, errors, and short
versions of the accuracy and tracking checks (the full figures come from tools/profile/detect_all.sh)."""
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run

PY = sys.executable


def require_renderer_packages():
    missing = []
    for module in ("numpy", "cv2", "skimage", "sklearn", "matplotlib"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    assert not missing, (f"the scene renderer needs {missing}: pip install numpy opencv-python-headless "
                         "scikit-image scikit-learn matplotlib (tools/deps.sh installs them)")


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """Three rendered tuning-set scenes with ground truth."""
    require_renderer_packages()
    out = tmp_path_factory.mktemp("scenes")
    run(PY, ROOT / "tools/scenes/render.py", "scenes", "--set", "tuning", "--count", "3", "--seed", "11",
        "--out", out, "--cache", ROOT / ".build/scenes-cache")
    return out, json.loads((out / "truth.json").read_text())


def png_size(path):
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_json_on_an_image_is_one_object_with_ordered_corners(colorcam, scene):
    directory, truth = scene
    sys.path.insert(0, str(ROOT / "tools/scenes"))
    import metrics
    matched = total = 0
    for s in truth["scenes"]:
        out = run(colorcam, "detect", directory / s["file"], "--json").stdout
        lines = out.splitlines()
        assert len(lines) == 1, f"expected exactly one JSON line, got {len(lines)}: {out!r}"
        obj = json.loads(lines[0])
        assert set(obj) == {"width", "height", "detections"}
        assert (obj["width"], obj["height"]) == (s["width"], s["height"])
        for d in obj["detections"]:
            assert set(d) == {"corners", "confidence", "id"}
            c = d["corners"]
            assert len(c) == 4 and all(len(p) == 2 for p in c)
            assert 0 <= d["confidence"] <= 1
            # Clockwise on screen (positive shoelace with y down), starting nearest the top-left.
            area = sum(c[i][0] * c[(i + 1) % 4][1] - c[(i + 1) % 4][0] * c[i][1] for i in range(4))
            assert area > 0, f"corners not clockwise: {c}"
            dist = [p[0] ** 2 + p[1] ** 2 for p in c]
            assert dist[0] == min(dist), f"first corner is not the one nearest (0,0): {c}"
        ids = [d["id"] for d in obj["detections"]]
        assert len(set(ids)) == len(ids)
        hits, _ = metrics.match(s["photos"], [d["corners"] for d in obj["detections"]])
        matched += hits
        total += len(s["photos"])
    assert total >= 3, f"the rendered scenes hold {total} prints: the check needs some (renderer or seed changed?)"
    assert matched >= total - 1, f"only {matched} of {total} prints found at JI >= 0.9"


def test_text_output_and_draw(colorcam, scene, tmp_path):
    directory, truth = scene
    with_prints = [s for s in truth["scenes"] if s["photos"]]
    assert with_prints, "no rendered scene holds a print: the drawing check needs one (renderer or seed changed?)"
    s = with_prints[0]
    drawn = tmp_path / "drawn.png"
    out = run(colorcam, "detect", directory / s["file"], "--draw", drawn).stdout
    assert out.splitlines()[0].endswith(("photo", "photos"))
    assert png_size(drawn) == (s["width"], s["height"])


def test_a_clip_gives_one_json_line_per_frame(colorcam, ffmpeg, tmp_path):
    clip = tmp_path / "clip.y4m"
    run(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-frames:v", "7",
        "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-y", clip)
    for extra in ([], ["--no-track"]):
        lines = run(colorcam, "detect", clip, "--json", *extra).stdout.splitlines()
        assert len(lines) == 7
        for n, line in enumerate(lines):
            obj = json.loads(line)
            assert obj["frame"] == n and obj["width"] == 320 and obj["height"] == 240
            assert isinstance(obj["detections"], list)


@pytest.mark.parametrize("size", ["1x1", "16x16", "640x480"])
@pytest.mark.parametrize("source", ["color=black", "color=white", "noise"])
def test_degenerate_images_give_no_detections(colorcam, ffmpeg, tmp_path, size, source):
    png = tmp_path / "in.png"
    w, h = size.split("x")
    # lavfi sources want at least 2×2: render 2×2 or larger and scale to the size under test.
    big = "2x2" if size == "1x1" else size
    lavfi = (f"nullsrc=size={big},geq=random(1)*255:128:128,format=yuv444p" if source == "noise"
             else f"{source}:size={big}")
    run(ffmpeg, "-v", "error", "-f", "lavfi", "-i", lavfi, "-vf", f"scale={w}:{h}", "-frames:v", "1",
        "-pix_fmt", "rgb24", "-y", png)
    assert png_size(png) == (int(w), int(h))
    obj = json.loads(run(colorcam, "detect", png, "--json").stdout)
    assert obj["detections"] == [], obj


def test_errors_have_exit_codes_and_one_line(colorcam, tmp_path):
    missing = run(colorcam, "detect", tmp_path / "nope.png", check=False)
    assert missing.returncode in (65, 66) and len(missing.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad.png"
    bad.write_text("not a png")
    r = run(colorcam, "detect", bad, check=False)
    assert r.returncode == 65 and "bad.png" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run(colorcam, "detect", bad, "--min-size", "2", check=False)
    assert r.returncode == 64 and "minimumSize" in r.stderr
    r = run(colorcam, "detect", bad, "--frobnicate", check=False)
    assert r.returncode == 64
    r = run(colorcam, "bench", "nothing", check=False)
    assert r.returncode == 64


def test_bench_detect_prints_percentiles(colorcam, ffmpeg, tmp_path):
    clip = tmp_path / "clip.y4m"
    run(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=size=640x480:rate=30", "-frames:v", "5",
        "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-y", clip)
    obj = json.loads(run(colorcam, "bench", "detect", clip, "--repeat", "1", "--json").stdout)
    assert obj["frames"] == 5 and obj["width"] == 640
    assert 0 < obj["p50_ms"] <= obj["p90_ms"] <= obj["max_ms"]
    assert 0 < obj["cpu_p50_ms"]


def test_short_accuracy_check_beats_the_opencv_baseline(colorcam):
    """60 held-out scenes (benchmark photos, a seed the full benchmark does not use)."""
    require_renderer_packages()
    r = run(PY, ROOT / "tools/profile/detect_accuracy.py", "--set", "benchmark", "--count", "60", "--seed", "7",
            "--colorcam", colorcam, "--min-recall", "0.9", "--min-precision", "0.9", "--require-baseline-beaten",
            check=False, env={**os.environ, "COLORCAM_SCENE_CACHE": str(ROOT / ".build/scenes-cache")})
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr


def test_short_tracking_check(colorcam):
    """One 4-s sequence: no ID switch, static jitter ≤ 1 px, lag ≤ 1 frame, coverage ≥ 90 %, and the static
    print's outline within 1 px of the truth on average (steady is not enough: it must be on the paper's edge).
    (This sequence meets the 1-px target; the full set of rendered sequences does not yet on every print: see
    tools/profile/results/tracking-offset.txt.)"""
    require_renderer_packages()
    r = run(PY, ROOT / "tools/profile/detect_tracking.py", "--set", "benchmark", "--seeds", "5", "--seconds", "4",
            "--colorcam", colorcam, "--max-switches", "0", "--max-jitter", "1.0", "--max-lag", "1.0",
            "--min-coverage", "0.9", "--max-offset", "1.0", check=False,
            env={**os.environ, "COLORCAM_SCENE_CACHE": str(ROOT / ".build/scenes-cache")})
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr


def test_short_motion_check(colorcam):
    """One held-out clip of a print slid by hand at 7.3 px/frame, partly out of view at the end of each slide
    (tools/scenes/dr_render.py sequence --split heldout --seed 2, 92 frames): the product paints it (`detect --json`'s
    `painted`, the compositor's rule) with its outline within 1.5 px of the truth on at least 90 % of the frames
    while it moves (100 % when this test was written; tools/profile/detect_motion.py has the figures over 24 clips)."""
    require_renderer_packages()
    r = run(PY, ROOT / "tools/profile/detect_motion.py", "--split", "heldout", "--seeds", "2", "--colorcam", colorcam,
            "--min-moving-painted", "0.9", check=False,
            env={**os.environ, "COLORCAM_SCENE_CACHE": str(ROOT / ".build/scenes-cache")})
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
