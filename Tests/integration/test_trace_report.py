"""End-to-end checks of `colorcam trace-report` exit codes and --json output.

Runs the binary named by $COLORCAM (default .build/debug/colorcam; build it first with `swift build`).
"""
import json
import os
import subprocess

import pytest

COLORCAM = os.environ.get("COLORCAM", ".build/debug/colorcam")
FRAME_US = 33_333


def write_trace(path, infer_us, frames=60, close=True):
    """Writes a colorcam-style trace: '[' + first event, one ',{...}' line per event, ']' last.

    Every frame is captured and output; an inference is requested at each frame's arrival when the previous one
    has been requested and is started when the worker is free, so with infer_us > FRAME_US lag grows.
    """
    events = [
        {"name": "config", "ph": "i", "s": "g", "pid": 1, "tid": 6, "ts": 0,
         "args": {"command": "replay", "source": "clip.y4m", "pace": "realtime", "source_fps": 30,
                  "max_in_flight": 1, "queue": 1, "model": "sim", "simulated": True,
                  "simulate_inference_ms": infer_us / 1000, "simulate_jitter_ms": 0, "simulate_mode": "fixed",
                  "output_deadline_us": 100000}},
    ]
    worker_free = 0
    for frame in range(frames):
        ts = frame * 1_000_000 // 30  # floor of the exact 30 fps time, as the writer does
        events.append({"name": "capture", "ph": "X", "pid": 1, "tid": 1, "ts": ts, "dur": 100,
                       "args": {"frame": frame, "capture_ts_us": ts}})
        start = max(ts, worker_free)
        worker_free = start + infer_us
        events.append({"name": "infer", "ph": "X", "pid": 1, "tid": 3, "ts": start, "dur": infer_us,
                       "args": {"frame": frame, "requested_ts_us": ts, "lag_us": start - ts, "queued_us": 0,
                                "simulated": True}})
        events.append({"name": "in_flight", "ph": "C", "pid": 1, "tid": 6, "ts": ts, "args": {"value": 1}})
        events.append({"name": "output", "ph": "X", "pid": 1, "tid": 5, "ts": ts + 1000, "dur": 500,
                       "args": {"frame": frame, "result_frame": frame - 1, "result_age_us": FRAME_US,
                                "latency_us": 1500}})
    if close:
        events.append({"name": "summary", "ph": "i", "s": "g", "pid": 1, "tid": 6, "ts": frames * FRAME_US,
                       "args": {"frames_captured": frames, "frames_output": frames, "trace_events_lost": 0}})
    lines = ["[" + json.dumps(events[0])] + ["," + json.dumps(e) for e in events[1:]]
    text = "\n".join(lines) + "\n" + ("]\n" if close else "")
    path.write_text(text)
    return path


def run(*args):
    if not os.path.exists(COLORCAM):
        pytest.fail(f"{COLORCAM} not found: run `swift build` first or set COLORCAM")
    return subprocess.run([COLORCAM, "trace-report", *map(str, args)], capture_output=True, text=True, timeout=120)


def test_queueing_trace_fails_with_exit_1(tmp_path):
    result = run(write_trace(tmp_path / "queue.json", infer_us=53_333))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "verdict: FAIL" in result.stdout
    assert "lag grows" in result.stdout
    assert "SIMULATED inference" in result.stdout


def test_healthy_trace_passes_with_exit_0(tmp_path):
    result = run(write_trace(tmp_path / "ok.json", infer_us=20_000))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict: PASS" in result.stdout


def test_truncated_trace_is_reported_and_judged(tmp_path):
    path = write_trace(tmp_path / "cut.json", infer_us=20_000, close=False)
    with open(path, "a") as f:
        f.write(',{"name":"output","ph":"X","ts":99')
    result = run(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "trace truncated: closing ] missing; partial final event" in result.stdout


def test_not_a_trace_exits_65(tmp_path):
    path = tmp_path / "garbage.json"
    path.write_text("hello, I am not JSON\n")
    result = run(path)
    assert result.returncode == 65
    assert str(path) in result.stderr and "byte 0" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_json_without_colorcam_events_exits_65(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps([{"name": "foo", "ph": "X", "ts": 1, "dur": 2}]))
    assert run(path).returncode == 65


def test_missing_file_exits_66(tmp_path):
    result = run(tmp_path / "nope.json")
    assert result.returncode == 66
    assert "nope.json" in result.stderr


def test_usage_errors_exit_64(tmp_path):
    assert run().returncode == 64
    assert run(tmp_path / "a.json", "--max-lag-ms", "fast").returncode == 64
    assert run(tmp_path / "a.json", "--bogus").returncode == 64


def test_json_output_parses_and_carries_the_verdict(tmp_path):
    result = run(write_trace(tmp_path / "queue.json", infer_us=53_333), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    for key in ["frames", "drops", "output_fps", "inference", "lag_trend", "latency_us", "result_age_us",
                "in_flight", "config", "verdict", "truncation", "warnings"]:
        assert key in report
    assert report["verdict"]["pass"] is False
    assert report["verdict"]["exit_code"] == 1
    assert report["lag_trend"]["grows"] is True
    assert set(report["drops"]) == {"superseded", "busy", "late", "driver_gap", "decode_error", "sink_busy", "sink_error"}
    assert report["frames"]["captured"] == 60


def test_min_fps_threshold(tmp_path):
    path = write_trace(tmp_path / "ok.json", infer_us=20_000)
    assert run(path, "--min-fps", "30").returncode == 0
    assert run(path, "--min-fps", "31").returncode == 1
