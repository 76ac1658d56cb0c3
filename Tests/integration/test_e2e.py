"""End to end on the demo recording with the default model: photos found, colorized one at a time, composited
into every frame with the live L*; the rest of the frame untouched (original) or its luma (gray); saved photos beat
the grey baseline against the colour originals, each physical photo once; the real-time trace passes."""
import json
import sys

import pytest

from conftest import ROOT, realtime_attempts, run

PY = sys.executable
DEMO = ROOT / "tools/demo"


@pytest.fixture(scope="module")
def replayed(colorcam, demo_scene, tmp_path_factory):
    """asap replays (every frame processed): {background: (out.y4m, photos dir, trace)}."""
    scene, _ = demo_scene
    out = {}
    for background in ("gray", "original"):
        folder = tmp_path_factory.mktemp(f"e2e-{background}")
        args = [colorcam, "replay", scene, "--pace", "asap", "--background", background, "--quiet",
                "--output", folder / "out.y4m", "--trace", folder / "trace.json"]
        if background == "gray":
            args += ["--save-photos", folder / "photos"]
        run(*args)
        out[background] = (folder / "out.y4m", folder / "photos", folder / "trace.json")
    return out


@pytest.mark.parametrize("background", ["gray", "original"])
def test_outside_is_exact_and_inside_keeps_the_live_lightness(replayed, demo_scene, background):
    scene, truth = demo_scene
    out, _, _ = replayed[background]
    proc = run(PY, DEMO / "check_output.py", "--input", scene, "--output", out, "--truth", truth,
               "--background", background, "--dl-percentile", "100", "--json", check=False)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, json.dumps(report, indent=1)[:3000]
    assert report["inside_dl"]["max"] <= 1.0
    # Every print shows colour in nearly all of its still frames.
    for name, share in report["colour"].items():
        assert share["coloured_fraction"] >= 0.95, (name, share)


def test_saved_photos_beat_grey_and_each_photo_is_saved_once(replayed, demo_scene):
    _, truth = demo_scene
    _, photos, _ = replayed["gray"]
    proc = run(PY, DEMO / "score.py", "--photos", photos, "--originals", ROOT / "Assets/demo-photos",
               "--truth", truth, "--require-better", "--json", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert len(list(photos.glob("*.png"))) == 3 and len(list(photos.glob("*.json"))) == 3


def test_trace_says_why_each_photo_was_colorized(replayed):
    _, _, trace = replayed["gray"]
    events = json.loads(trace.read_text())
    infers = [e["args"] for e in events if e.get("name") == "infer"]
    reasons = {a["reason"] for a in infers}
    assert reasons <= {"new", "changed"} and "new" in reasons
    # One colorization per new photo: three prints → three 'new' (a print first seen cut by the frame edge may add
    # one more 'new' for its partial track), and far fewer colorizations than frames.
    assert 3 <= sum(a["reason"] == "new" for a in infers) <= 5
    assert len(infers) < 60
    outputs = [e["args"] for e in events if e.get("name") == "output"]
    assert len(outputs) == 300
    assert all(o.get("result_frame", -1) <= o.get("frame", 0) for o in outputs)


def test_realtime_replay_holds_30_fps_with_no_queued_prediction(colorcam, demo_scene, tmp_path):
    """The demo recording with the real model, in real time: the trace verdict passes (lag p99 ≤ 1 ms, one in
    flight, no 1-s window under 29.5 fps). The photos are colorized once each, so the lag figure rests on ~3
    inferences and one late wake-up of the inference thread on a busy machine decides it (CI: 7.1 ms once, in a
    run where nothing else ran; 0 of 18 runs here): timing gets 3 attempts the machine does not explain
    (`realtime_attempts`)."""
    scene, _ = demo_scene

    def measure(attempt):
        trace = tmp_path / f"trace{attempt}.json"
        run(colorcam, "replay", scene, "--pace", "realtime", "--trace", trace, "--quiet")
        proc = run(colorcam, "trace-report", trace, "--json", "--max-lag-ms", "1", "--min-fps", "29.5", check=False)
        report = json.loads(proc.stdout)
        assert report["in_flight"]["max"] <= 1
        assert report["inference"]["count"] >= 2, report["inference"]
        figures = {"verdict": report["verdict"]["line"], "frames": report["frames"],
                   "lag_us": report["inference"]["lag_us"]}
        return report["verdict"]["pass"] and report["frames"]["output"] >= 295, figures
    realtime_attempts(measure)


def test_colorizing_flags_are_refused_with_passthrough(colorcam, demo_scene):
    scene, _ = demo_scene
    p = run(colorcam, "replay", scene, "--passthrough", "--background", "original", check=False)
    assert p.returncode == 64 and "--background" in p.stderr
    p = run(colorcam, "replay", scene, "--model", "/nonexistent/model", check=False)
    assert p.returncode == 66 and "/nonexistent/model" in p.stderr


def test_batch_conversion_is_byte_exact_run_to_run(colorcam, demo_scene, tmp_path):
    # --pace asap: every frame waits for its own inference, the next inference waits for the frame's composite, and
    # tracking runs on the file's own times, so how fast the machine happens to be changes nothing in the output.
    scene, _ = demo_scene
    outs = [tmp_path / f"asap{k}.y4m" for k in range(2)]
    for out in outs:
        run(colorcam, "replay", scene, "--pace", "asap", "--quiet", "--output", out)
    a, b = (out.read_bytes() for out in outs)
    assert len(a) == len(b) > 300 * 640 * 480
    assert a == b, f"{sum(x != y for x, y in zip(a, b))} bytes differ between two asap runs"
