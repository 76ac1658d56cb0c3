"""colorcam replay end to end: ffmpeg interop, real-time scheduling figures, pacing by recorded timestamps."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import framemd5, realtime_attempts, run

FFMPEG_FORMATS = [
    # (pix_fmt, extra ffmpeg args, expected Y4M C tag)
    ("yuv420p", [], "420jpeg"),
    ("yuv420p", ["-chroma_sample_location", "topleft"], "420paldv"),
    ("yuv420p", ["-chroma_sample_location", "left"], "420mpeg2"),
    ("yuv422p", [], "422"),
    ("yuv444p", [], "444"),
    ("gray", [], "mono"),
]


def header_of(path):
    with open(path, "rb") as f:
        return f.readline().decode()


def make_clip(tmp_path, size, pix_fmt, extra, frames=5, name="in.y4m"):
    path = tmp_path / name
    run("ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc=size={size}:rate=30", "-frames:v", frames,
        "-pix_fmt", pix_fmt, *extra, "-f", "yuv4mpegpipe", "-y", path)
    return path


@pytest.mark.parametrize("size", ["321x241", "640x480", "2x2", "17x31"])
@pytest.mark.parametrize("pix_fmt,extra,tag", FFMPEG_FORMATS)
def test_passthrough_is_bit_exact_in_ffmpeg(colorcam, ffmpeg, tmp_path, size, pix_fmt, extra, tag):
    src = make_clip(tmp_path, size, pix_fmt, extra)
    assert f" C{tag}" in header_of(src), "ffmpeg did not write the colour space under test"
    out = tmp_path / "out.y4m"
    run(colorcam, "replay", src, "--passthrough", "--pace", "asap", "--quiet", "--output", out)
    assert f" C{tag}" in header_of(out)
    want, got = framemd5(src), framemd5(out)
    assert len(want) == 5 and got == want


def test_plain_420_tag_and_unknown_parameters(colorcam, ffmpeg, tmp_path):
    src = make_clip(tmp_path, "64x48", "yuv420p", [])
    data = src.read_bytes()
    header_end = data.index(b"\n")
    header = data[:header_end].replace(b"C420jpeg", b"C420 Xcolorcam_test=1 Zunknown")
    body = data[header_end:].replace(b"FRAME\n", b"FRAME Iignored Xother=7\n")
    plain = tmp_path / "plain.y4m"
    plain.write_bytes(header + body)
    out = tmp_path / "out.y4m"
    run(colorcam, "replay", plain, "--passthrough", "--pace", "asap", "--quiet", "--output", out)
    assert "C420" in header_of(out).split()
    assert framemd5(out) == framemd5(src)


def test_stdin_to_stdout(colorcam, ffmpeg, tmp_path):
    src = make_clip(tmp_path, "321x241", "yuv420p", [], frames=8)
    out = tmp_path / "piped.y4m"
    with open(src, "rb") as fin, open(out, "wb") as fout:
        proc = subprocess.run([colorcam, "replay", "-", "--passthrough", "--pace", "asap", "--quiet", "--output", "-"],
                              stdin=fin, stdout=fout, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0, proc.stderr
    assert framemd5(out) == framemd5(src)


def report(colorcam, trace, *extra):
    proc = run(colorcam, "trace-report", trace, "--json", *extra, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def ten_second_clip(tmp_path_factory, colorcam):
    path = tmp_path_factory.mktemp("clip") / "clip.y4m"
    run(colorcam, "testclip", path, "--size", "640x480", "--fps", "30", "--seconds", "10")
    return path


def test_realtime_90ms_holds_30fps_with_no_queued_predictions(colorcam, ten_second_clip, tmp_path):
    """The stream-spine acceptance run: 10 s 640x480 at 30 fps, a 90 ms simulated inference, real time."""
    def measure(attempt):
        trace, out = tmp_path / f"t{attempt}.json", tmp_path / f"out{attempt}.y4m"
        proc = run(colorcam, "replay", ten_second_clip, "--simulate-inference-ms", "90", "--pace", "realtime",
                   "--trace", trace, "--output", out)
        assert "SIMULATION" in proc.stderr
        code, r = report(colorcam, trace, "--max-lag-ms", "2", "--min-fps", "29.5")
        # Not timing: one in flight, every frame that did not get an inference superseded, all frames written.
        assert r["in_flight"]["max"] == 1
        assert r["drops"]["superseded"] == r["frames"]["captured"] - r["inference"]["count"]
        assert r["config"]["simulated"] is True
        assert r["lag_trend"]["grows"] is False
        assert len(framemd5(out)) == r["frames"]["output"]
        verdict = run(colorcam, "trace-report", trace, "--max-lag-ms", "2", "--min-fps", "29.5", check=False)
        figures = {"frames": r["frames"], "worst_1s_window_frames": r["output_fps"]["worst_1s_window_frames"],
                   "lag_p99_us": r["inference"]["lag_us"]["p99"], "inferences": r["inference"]["count"],
                   "report_exit": code, "verdict_exit": verdict.returncode}
        timing_ok = (r["frames"] == {"captured": 300, "output": 300, "dropped": 0}
                     and r["output_fps"]["worst_1s_window_frames"] >= 29.5
                     and r["inference"]["lag_us"]["p99"] <= 1000
                     and 100 <= r["inference"]["count"] <= 115  # 10 s / 90 ms, each starting as the last ends
                     and code == 0 and verdict.returncode == 0)
        return timing_ok, figures
    realtime_attempts(measure)


def test_realtime_16ms_gives_every_frame_its_own_inference(colorcam, ten_second_clip, tmp_path):
    """A 16-ms simulated inference in real time: every frame gets its own, and the verdict passes. All of it is
    timing (a late inference thread supersedes a frame), so it gets `realtime_attempts`: CI on 9632230 failed the
    verdict once (trace-report exit 1) with the counts right."""
    def measure(attempt):
        trace = tmp_path / f"t{attempt}.json"
        run(colorcam, "replay", ten_second_clip, "--simulate-inference-ms", "16", "--trace", trace, "--quiet")
        code, r = report(colorcam, trace, "--max-lag-ms", "2", "--min-fps", "29.5")
        assert r["frames"]["captured"] == 300 and r["config"]["simulated"] is True
        figures = {"inferences": r["inference"]["count"], "drops": r["drops"], "verdict": r["verdict"]["line"],
                   "result_age_p50_us": r["result_age_us"]["p50"]}
        timing_ok = (r["inference"]["count"] == 300
                     and r["drops"]["superseded"] == 0 and r["drops"]["busy"] == 0
                     and r["result_age_us"]["p50"] <= 34_000  # outputs carry the previous frame's result
                     and code == 0)
        return timing_ok, figures
    realtime_attempts(measure)


def test_queue_zero_drops_busy_not_superseded(colorcam, tmp_path):
    clip, trace = tmp_path / "c.y4m", tmp_path / "t.json"
    run(colorcam, "testclip", clip, "--size", "160x120", "--seconds", "2")
    run(colorcam, "replay", clip, "--simulate-inference-ms", "90", "--simulate-mode", "sleep", "--queue", "0",
        "--trace", trace, "--quiet")
    _, r = report(colorcam, trace)
    assert r["drops"]["busy"] > 0 and r["drops"]["superseded"] == 0
    assert r["drops"]["busy"] + r["inference"]["count"] == 60
    assert r["frames"]["output"] == 60


def write_y4m_with_timestamps(path, timestamps_us, w=64, h=48):
    frame = bytes(w * h * 3 // 2)
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C420jpeg\n".encode())
        for ts in timestamps_us:
            f.write(f"FRAME Xts_us={ts}\n".encode())
            f.write(frame)


def capture_times_us(trace):
    """Each captured frame's capture time from a trace file, µs, in trace order."""
    return [e["args"]["capture_ts_us"] for e in json.loads(trace.read_text()) if e.get("name") == "capture"]


def test_realtime_replay_reproduces_recorded_jitter_and_gaps(colorcam, tmp_path):
    """Each frame is captured at its recorded time (within 3 ms). The times are the machine's clock, so they get
    `realtime_attempts`; the frame and tag counts fail at once."""
    stamps = [0, 33_000, 70_000, 100_000, 300_000, 333_000, 366_000]  # jitter, then a 200 ms gap
    clip = tmp_path / "ts.y4m"
    write_y4m_with_timestamps(clip, stamps)

    def measure(attempt):
        trace, out = tmp_path / f"t{attempt}.json", tmp_path / f"out{attempt}.y4m"
        run(colorcam, "replay", clip, "--passthrough", "--trace", trace, "--output", out, "--quiet")
        captures = capture_times_us(trace)
        got = [c - captures[0] for c in captures]
        assert len(got) == len(stamps)
        # The output carries each frame's capture time as its own timestamp tag.
        tags = re.findall(rb"FRAME Xts_us=(\d+)", out.read_bytes())
        assert len(tags) == len(stamps)
        worst_us = max(abs(have - want) for want, have in zip(stamps, got))
        return worst_us <= 3_000, {"capture_offsets_us": got, "worst_error_us": worst_us}
    realtime_attempts(measure)


def test_header_rate_paces_a_file_without_timestamps(colorcam, tmp_path):
    """20 frames at the header's 20 fps span 19 × 50 ms (within 5 ms; the machine's clock: `realtime_attempts`)."""
    clip = tmp_path / "c.y4m"
    run(colorcam, "testclip", clip, "--size", "64x48", "--fps", "20", "--seconds", "1")

    def measure(attempt):
        trace = tmp_path / f"t{attempt}.json"
        run(colorcam, "replay", clip, "--passthrough", "--trace", trace, "--quiet")
        captures = capture_times_us(trace)
        assert len(captures) == 20
        span_us = captures[-1] - captures[0]
        return abs(span_us - 19 * 50_000) <= 5_000, {"span_us": span_us}
    realtime_attempts(measure)


def test_loop_and_fps_override(colorcam, tmp_path):
    """Three loops of 10 frames at --fps 60 span 29 × 16.667 ms (within 5 ms; the machine's clock:
    `realtime_attempts`)."""
    clip = tmp_path / "c.y4m"
    run(colorcam, "testclip", clip, "--size", "64x48", "--fps", "10", "--seconds", "1")

    def measure(attempt):
        trace = tmp_path / f"t{attempt}.json"
        run(colorcam, "replay", clip, "--passthrough", "--loop", "3", "--fps", "60", "--trace", trace, "--quiet")
        captures = capture_times_us(trace)
        assert len(captures) == 30
        span_us = captures[-1] - captures[0]
        return abs(span_us - 29 * 16_667) <= 5_000, {"span_us": span_us}
    realtime_attempts(measure)


def test_png_folder_replays_in_name_order(colorcam, ffmpeg, tmp_path):
    frames = tmp_path / "pngs"
    frames.mkdir()
    run("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=65x33:rate=30", "-frames:v", "6",
        frames / "f%03d.png")
    out = tmp_path / "out.y4m"
    run(colorcam, "replay", frames, "--passthrough", "--pace", "asap", "--quiet", "--output", out)
    assert len(framemd5(out)) == 6
    header = header_of(out)
    assert "W65" in header and "H33" in header and "F30:1" in header


def test_sigint_finishes_a_valid_prefix_and_trace(colorcam, tmp_path):
    clip, trace, out = tmp_path / "c.y4m", tmp_path / "t.json", tmp_path / "out.y4m"
    run(colorcam, "testclip", clip, "--size", "160x120", "--seconds", "5")
    proc = subprocess.Popen([colorcam, "replay", clip, "--trace", trace, "--output", out,
                             "--simulate-inference-ms", "20"], stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    n = len(framemd5(out))
    assert 10 <= n < 150
    code, r = report(colorcam, trace)
    assert r["frames"]["output"] == n


def test_every_command_has_help(colorcam):
    top = run(colorcam, "--help").stdout
    for cmd in re.findall(r"^  (\S+)\s", top, re.M):
        assert "usage: colorcam " + cmd in run(colorcam, cmd, "--help").stdout
    bad = run(colorcam, "replay", "x.y4m", "--no-such-option", check=False)
    assert bad.returncode == 64 and "--no-such-option" in bad.stderr
    assert run(colorcam, "no-such-command", check=False).returncode == 64


def test_output_to_a_fifo_is_written_in_place(colorcam, tmp_path):
    """A device or FIFO output (a player reading a pipe, /dev/null) is written directly, never replaced by a file."""
    import os
    import threading
    clip = tmp_path / "c.y4m"
    run(colorcam, "testclip", clip, "--size", "64x48", "--seconds", "0.2")
    fifo = tmp_path / "out.y4m"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("bytes", open(fifo, "rb").read()))
    reader.start()
    run(colorcam, "replay", clip, "--passthrough", "--pace", "asap", "--quiet", "--output", fifo)
    reader.join(timeout=20)
    assert fifo.is_fifo(), "the FIFO was replaced by a regular file"
    assert got["bytes"].startswith(b"YUV4MPEG2")
    assert got["bytes"].count(b"FRAME") == clip.read_bytes().count(b"FRAME")
