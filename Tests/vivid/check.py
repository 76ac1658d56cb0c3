#!/usr/bin/env python3
"""Judges the outputs Tests/vivid/guest.sh left in the work folder (run on the host by Tests/vivid/run.sh).

usage: check.py WORK_DIR COLORCAM

Prints one line per check (PASS/FAIL and the measured figure) and exits 1 if any check failed.
"""
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

WORK, COLORCAM = sys.argv[1], sys.argv[2]
failures = []
FRAME_MS = 1000 / 30


def check(ok, name, detail=""):
    print(f"{'PASS' if ok else 'FAIL'}  {name}{': ' + detail if detail else ''}")
    if not ok:
        failures.append(name)
    return ok


def text(name):
    path = os.path.join(WORK, name)
    return open(path, errors="replace").read() if os.path.exists(path) else ""


def rc(name):
    t = text(name + ".rc").strip()
    return int(t) if t else None


def read_y4m(path):
    """Returns (header dict, [(xts_us or None, frame bytes)]); raises ValueError on a malformed file."""
    data = open(path, "rb").read()
    end = data.index(b"\n")
    tokens = data[:end].split()
    if tokens[0] != b"YUV4MPEG2":
        raise ValueError("no YUV4MPEG2 magic")
    h = {t[:1].decode(): t[1:].decode() for t in tokens[1:]}
    w, ht, c = int(h["W"]), int(h["H"]), h.get("C", "420jpeg")
    cw, ch = {"422": ((w + 1) // 2, ht), "444": (w, ht), "mono": (0, 0)}.get(c, ((w + 1) // 2, (ht + 1) // 2))
    size = w * ht + 2 * cw * ch
    frames, pos = [], end + 1
    while pos < len(data):
        line_end = data.index(b"\n", pos)
        line = data[pos:line_end]
        if not line.startswith(b"FRAME"):
            raise ValueError(f"bad FRAME line at byte {pos}")
        m = re.search(rb"Xts_us=(-?\d+)", line)
        body = data[line_end + 1:line_end + 1 + size]
        if len(body) != size:
            raise ValueError(f"truncated frame {len(frames)}")
        frames.append((int(m.group(1)) if m else None, body))
        pos = line_end + 1 + size
    h.update(width=w, height=ht, chroma=c, frame_bytes=size)
    return h, frames


def read_trace(path):
    t = open(path).read().rstrip()
    if not t.endswith("]"):
        t = t.rstrip(",") + "]"
    return json.loads(t)


def capture_events(trace):
    caps = [e for e in trace if e.get("name") == "capture" and e.get("ph") == "X"]
    gaps = [e["args"]["frame"] for e in trace if e.get("name") == "drop" and e["args"].get("reason") == "driver_gap"]
    return caps, gaps


def continuity(caps, gaps):
    """Capture ids strictly increase and, with the driver_gap drops, cover every sequence number."""
    ids = [e["args"]["frame"] for e in caps]
    increasing = all(b > a for a, b in zip(ids, ids[1:]))
    covered = sorted(ids + gaps)
    contiguous = covered == list(range(covered[0], covered[0] + len(covered))) if covered else False
    return increasing, contiguous


# 1. devices --------------------------------------------------------------------------------------------------------
out = text("devices.out")
check(rc("devices") == 0 and "/dev/video0: vivid" in out and re.search(r"640x360: .*30 40 fps", out) is not None,
      "devices lists vivid with formats, sizes and rates", f"exit {rc('devices')}, {len(out.splitlines())} lines")
listed = re.findall(r"^(/dev/\S+): ", out, flags=re.M)
enabled = re.findall(r"^sudo systemctl enable --now colorcam@(\S+) +# (\S+), preview http://127\.0\.0\.1:(\d+)/$", out,
                     flags=re.M)
check(bool(listed) and [d for _, d, _ in enabled] == listed and [n for n, _, _ in enabled] == [d[5:] for d in listed]
      and [int(p) for _, _, p in enabled] == list(range(8080, 8080 + len(listed)))
      and all(f"echo 'COLORCAM_LISTEN=127.0.0.1:{p}' | sudo tee /etc/colorcam/{n}.env" in out for n, _, p in enabled),
      "devices ends with one colorcam@ service per capture device, ports from 8080",
      f"listed {listed}, service lines {enabled}")

# 2. 300 frames at 640x360, 30 fps ------------------------------------------------------------------------------------
try:
    hdr, frames = read_y4m(os.path.join(WORK, "cap300.y4m"))
    trace = read_trace(os.path.join(WORK, "cap300.json"))
    caps, gaps = capture_events(trace)
    ts = [f[0] for f in frames]
    check(rc("cap300") == 0 and len(frames) == 300 and len(caps) == 300, "300 frames recorded, exact count",
          f"{len(frames)} frames in the file, {len(caps)} capture spans, exit {rc('cap300')}")
    increasing, contiguous = continuity(caps, gaps)
    check(increasing and contiguous, "sequence continuous (capture ids + driver_gap drops cover every number)",
          f"{len(gaps)} driver gaps")
    # What the driver itself did under the same VM load, as v4l2-ctl saw it just before and just after colorcam's
    # recordings (vivid's timer thread skips or repeats sequence numbers when the emulated guest falls behind; the
    # load varies over the run, so the worse of the two reads is the reference). The load can also peak during one
    # recording only: a second recording (cap300b) is a second attempt, and the check passes when either holds.
    refs = []
    for name in ("seq_v4l2ctl_before", "seq_v4l2ctl"):
        seq = [int(x) for x in re.findall(r"seq:\s*(\d+)", text(f"{name}.out") + text(f"{name}.err"))]
        refs.append((sum(max(0, b - a - 1) for a, b in zip(seq, seq[1:])),
                     sum(1 for a, b in zip(seq, seq[1:]) if b <= a), len(seq)))
    ref_gaps = max(r[0] for r in refs)
    try:
        gaps_b = len(capture_events(read_trace(os.path.join(WORK, "cap300b.json")))[1])
    except Exception:  # a missing or broken second attempt counts as no attempt
        gaps_b = None
    attempts = [len(gaps)] + ([gaps_b] if gaps_b is not None else [])
    check(min(attempts) <= max(3, 2 * ref_gaps), "driver gaps no worse than v4l2-ctl's in the same VM",
          f"colorcam {' and '.join(map(str, attempts))} skipped sequence numbers in 300 frames (attempts); v4l2-ctl "
          + ", ".join(f"{g} skipped, {r} repeated in {n}" for g, r, n in refs) + " (before, after)")
    check(all(b > a for a, b in zip(ts, ts[1:])), "timestamps strictly increasing")
    check([e["args"]["capture_ts_us"] for e in caps] == ts, "Xts_us in the file = capture_ts_us in the trace")
    ids = [e["args"]["frame"] for e in caps]
    per_frame_ms = (ts[-1] - ts[0]) / (len(ts) - 1) / 1000
    per_seq_ms = (ts[-1] - ts[0]) / (ids[-1] - ids[0]) / 1000
    check(abs(per_seq_ms - FRAME_MS) <= 1, "mean interval per sequence step 33.3 ms ± 1", f"{per_seq_ms:.3f} ms")
    if gaps:
        print(f"      mean interval per recorded frame {per_frame_ms:.3f} ms (includes the {len(gaps)} frames vivid skipped)")
    else:
        check(abs(per_frame_ms - FRAME_MS) <= 1, "mean interval per recorded frame 33.3 ms ± 1", f"{per_frame_ms:.3f} ms")
    intervals = np.diff(np.array(ts)) / 1000
    print(f"      intervals: min {intervals.min():.2f} ms, max {intervals.max():.2f} ms, std {intervals.std():.2f} ms")
except (OSError, ValueError, KeyError, IndexError) as e:
    check(False, "300-frame capture readable", str(e))

# 3. pixel equality with v4l2-ctl -----------------------------------------------------------------------------------


def rgb_to_ycbcr444(r, g, b):
    r, g, b = (x.astype(np.int32) for x in (r, g, b))
    y = ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16
    cb = ((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128
    cr = ((112 * r - 94 * g - 18 * b + 128) >> 8) + 128
    return np.concatenate([y.ravel(), cb.ravel(), cr.ravel()]).astype(np.uint8).tobytes()


def planar_from_raw(fmt, raw, w, h):
    a = np.frombuffer(raw, dtype=np.uint8)
    if fmt in ("YUYV", "UYVY"):
        p = a.reshape(h, w * 2)
        yo, uo, vo = (0, 1, 3) if fmt == "YUYV" else (1, 0, 2)
        return p[:, yo::2].tobytes() + p[:, uo::4].tobytes() + p[:, vo::4].tobytes()
    if fmt == "NV12":
        uv = a[w * h:w * h + w * h // 2]
        return a[:w * h].tobytes() + uv[0::2].tobytes() + uv[1::2].tobytes()
    if fmt == "YU12":
        return a[:w * h * 3 // 2].tobytes()
    if fmt == "GREY":
        return a[:w * h].tobytes()
    if fmt == "RGB3":
        p = a[:w * h * 3].reshape(h * w, 3)
        return rgb_to_ycbcr444(p[:, 0], p[:, 1], p[:, 2])
    if fmt == "XR24":  # B G R X in memory
        p = a[:w * h * 4].reshape(h * w, 4)
        return rgb_to_ycbcr444(p[:, 2], p[:, 1], p[:, 0])
    raise ValueError(fmt)


equal_formats = []
for fmt in ["YUYV", "UYVY", "NV12", "YU12", "GREY", "RGB3", "XR24"]:
    try:
        hdr, frames = read_y4m(os.path.join(WORK, f"eq_{fmt}.y4m"))
        raw = open(os.path.join(WORK, f"ref_{fmt}.raw"), "rb").read()
        w, h = hdr["width"], hdr["height"]
        n = 3
        size = len(raw) // n
        refs = [planar_from_raw(fmt, raw[i * size:(i + 1) * size], w, h) for i in range(n)]
        stable = refs[1] == refs[2]
        same = frames[-1][1] == refs[-1]
        if not same:
            diff = np.count_nonzero(np.frombuffer(frames[-1][1], np.uint8) != np.frombuffer(refs[-1], np.uint8))
        kind = "converted with BT.601 reference" if fmt in ("RGB3", "XR24") else "byte for byte"
        check(rc(f"eq_{fmt}") == 0 and rc(f"ref_{fmt}") == 0 and stable and same,
              f"pixels equal v4l2-ctl --stream-to, {fmt} 640x480 ({kind})",
              f"{len(frames[-1][1])} bytes, vivid frames stable: {stable}" + ("" if same else f", {diff} bytes differ"))
        if same:
            equal_formats.append(fmt)
    except (OSError, ValueError, KeyError, IndexError) as e:
        check(False, f"pixel equality {fmt}", f"{e}; stderr: {text(f'eq_{fmt}.err').strip()[:200]}")

# 4. format sweep at 640x480 ----------------------------------------------------------------------------------------
expected = {}
for f in "YUYV UYVY YVYU VYUY 422P NV16 NV61".split():
    expected[f] = "422"
for f in "YU12 YV12 NV12 NV21".split():
    expected[f] = "420mpeg2"
for f in "NV24 NV42 RGB3 BGR3 XR24 AR24 RX24 RA24 XB24 AB24 BX24 BA24".split():
    expected[f] = "444"
for f in "GREY Y10_ Y12_ Y16_".split():
    expected[f] = "mono"
converted, refused, wrong = [], [], []
for f in text("sweep_formats.txt").split("\n"):
    if not f:
        continue
    tag = f.replace(" ", "_")
    code = rc(f"sweep_{tag}")
    if tag in expected:
        try:
            hdr, frames = read_y4m(os.path.join(WORK, f"sweep_{tag}.y4m"))
            ok = code == 0 and hdr["chroma"] == expected[tag] and len(frames) == 2 and hdr["width"] == 640
        except (OSError, ValueError) as e:
            ok = False
        (converted if ok else wrong).append(f"{tag}→{expected[tag]}" if ok else f"{tag} (exit {code})")
    else:
        err = text(f"sweep_{tag}.err")
        (refused if code == 69 and "cannot convert" in err else wrong).append(f"{tag} (exit {code})" if code != 69 else tag)
check(not wrong and len(converted) >= 20, "format sweep at 640x480: every format converts or is refused with exit 69",
      f"{len(converted)} convert, {len(refused)} refused" + (f"; WRONG: {', '.join(wrong)}" if wrong else ""))
print("      converted: " + " ".join(converted))
print("      refused (exit 69, 'cannot convert'): " + " ".join(refused))

# 5. decimation ----------------------------------------------------------------------------------------------------
try:
    hdr, frames = read_y4m(os.path.join(WORK, "decim.y4m"))
    trace = read_trace(os.path.join(WORK, "decim.json"))
    config = next(e for e in trace if e.get("name") == "config")["args"]
    err = text("decim.err")
    notes = [l for l in err.splitlines() if "decimating" in l]
    ts = [f[0] for f in frames]
    mean_ms = (ts[-1] - ts[0]) / (len(ts) - 1) / 1000
    caps, gaps = capture_events(trace)
    ids = [e["args"]["frame"] for e in caps]
    steps = np.diff(ids)
    check(rc("decim") == 0 and len(frames) == 90, "decimation: 90 frames recorded", f"exit {rc('decim')}")
    check(len(notes) == 1 and "60 fps" in notes[0], "decimation said exactly once on stderr",
          notes[0] if notes else "no note")
    check(config.get("decimating") is True and "decimating" in config.get("notes", "") and config.get("device_fps") == 60,
          "decimation in the trace config", f"device_fps {config.get('device_fps')}, source_fps {config.get('source_fps')}")
    # Kept frames sit one per 1/30 s slot of the device's sequence (slot = (seq - first) // 2); a slot whose frames
    # vivid skipped (driver gaps) is simply absent, so the per-frame mean is only exact when there were no gaps.
    slots = [(i - ids[0]) // 2 for i in ids]
    per_seq_ms = (ts[-1] - ts[0]) / (ids[-1] - ids[0]) / 1000
    check(len(set(slots)) == len(slots) and hdr["F"] == "30:1" and abs(per_seq_ms - 1000 / 60) <= 1,
          "decimated to 30 fps: one frame per 1/30 s slot of the 60 fps device",
          f"{len(slots)} frames in {slots[-1] + 1} slots, device interval {per_seq_ms:.3f} ms, header F{hdr['F']}, "
          f"{len(gaps)} driver gaps, sequence steps: {dict((int(k), int(v)) for k, v in zip(*np.unique(steps, return_counts=True)))}")
    if gaps:
        print(f"      mean interval per kept frame {mean_ms:.3f} ms (slots emptied by the {len(gaps)} driver gaps included)")
    else:
        check(abs(mean_ms - FRAME_MS) <= 1, "decimated mean interval 33.3 ms ± 1", f"{mean_ms:.3f} ms")
except (OSError, ValueError, KeyError, IndexError, StopIteration) as e:
    check(False, "decimation run readable", str(e))

# 6. driver gaps ---------------------------------------------------------------------------------------------------
try:
    trace = read_trace(os.path.join(WORK, "gaps.json"))
    caps, gaps = capture_events(trace)
    summary = next(e for e in trace if e.get("name") == "summary")["args"]
    increasing, contiguous = continuity(caps, gaps)
    share = len(gaps) / (len(gaps) + len(caps))
    check(rc("gaps") == 0 and len(caps) == 120 and share >= 0.05 and increasing and contiguous
          and summary.get("driver_gap_frames") == len(gaps),
          "percentage_of_dropped_buffers=20 → driver_gap drops in the trace",
          f"{len(gaps)} driver_gap drops for {len(caps)} frames ({share:.0%}; 20 % asked, more when the loaded VM "
          f"makes vivid skip), ids+drops contiguous: {contiguous}")
except (OSError, ValueError, KeyError, IndexError, StopIteration) as e:
    check(False, "gap run readable", str(e))

# 7. record → replay round trip (on the host) ----------------------------------------------------------------------
try:
    rt = os.path.join(WORK, "roundtrip.y4m")
    p = subprocess.run([COLORCAM, "replay", os.path.join(WORK, "cap300.y4m"), "--passthrough", "--pace", "asap", "--quiet",
                        "--output", rt], capture_output=True, text=True)
    h1, f1 = read_y4m(os.path.join(WORK, "cap300.y4m"))
    h2, f2 = read_y4m(rt)
    same_pixels = [a[1] for a in f1] == [b[1] for b in f2]
    same_ts = [a[0] for a in f1] == [b[0] for b in f2]
    check(p.returncode == 0 and same_pixels and same_ts and h1["C"] == h2["C"],
          "record then replay round-trips frames and timestamps exactly",
          f"{len(f2)} frames, pixels equal: {same_pixels}, Xts_us equal: {same_ts}, exit {p.returncode} {p.stderr.strip()[:200]}")
except (OSError, ValueError) as e:
    check(False, "round trip", str(e))

# 8. CPU per frame --------------------------------------------------------------------------------------------------


def seconds(name):
    u, s, _ = text(name).split()
    return float(u) + float(s)


try:
    # Under TCG on a shared host one round can take far less or far more CPU than the next (CI once saw v4l2-ctl's
    # two rounds differ by 45 %): judge each program by its median of three interleaved rounds, so one disturbed
    # round on either side moves nothing; print the best rounds and the means too.
    per = {}
    for name in ("colorcam", "v4l2ctl"):
        runs = sorted(seconds(f"cpu_{name}_{i}.time") for i in (1, 2, 3))
        startup = seconds(f"cpu1_{name}.time")
        per[name] = ((runs[1] - startup) / 299 * 1000, (runs[0] - startup) / 299 * 1000,
                     (sum(runs) / 3 - startup) / 299 * 1000, startup)
    ours, theirs = per["colorcam"], per["v4l2ctl"]
    check(ours[0] <= 1.5 * theirs[0],
          "CPU per captured frame (capture + convert + write), 640x360 YUYV, within 1.5x v4l2-ctl",
          f"colorcam {ours[0]:.2f} ms/frame, v4l2-ctl --stream-mmap {theirs[0]:.2f} ms/frame, ratio "
          f"{ours[0] / theirs[0]:.2f} (user+sys, median of 3 interleaved runs of 300 frames minus a 1-frame run; "
          f"best runs: {ours[1]:.2f} vs {theirs[1]:.2f}, ratio {ours[1] / theirs[1]:.2f}; means: "
          f"{ours[2]:.2f} vs {theirs[2]:.2f}, ratio {ours[2] / theirs[2]:.2f}; start-up {ours[3]:.2f} s vs {theirs[3]:.2f} s)")
except (ValueError, ZeroDivisionError) as e:
    check(False, "CPU figures readable", str(e))

# 9. disconnect ----------------------------------------------------------------------------------------------------
err = text("disc.err").strip()
err_lines = [l for l in err.splitlines() if "/dev/video0" in l and "failed" in l]
try:
    hdr, frames = read_y4m(os.path.join(WORK, "disc.y4m"))
    valid = len(frames) > 0
except (OSError, ValueError) as e:
    valid, frames = False, []
leftovers = glob.glob(os.path.join(WORK, ".disc.y4m.tmp-*"))
check(rc("disc") == 69, "disconnect mid-stream exits 69", f"exit {rc('disc')}")
check(len(err_lines) == 1, "disconnect: one clear error line naming device and request", err_lines[0] if err_lines else err[:300])
check(valid and not leftovers, "disconnect: recorded prefix is a valid .y4m",
      f"{len(frames)} complete frames kept, temp files left: {len(leftovers)}")

# 10. colorcam live --device: endpoints, device loss and recovery, SIGTERM -----------------------------------------
def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker, or None."""
    i = 2
    while i + 9 < len(data) and data[:2] == b"\xff\xd8":
        if data[i] != 0xFF:
            return None
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    return None


if os.path.exists(os.path.join(WORK, "live.rc")):
    check(text("live_healthz.code") == "200" and text("live_healthz.txt").strip() == "ok", "live: /healthz 200 ok",
          f"{text('live_healthz.code')} {text('live_healthz.txt').strip()!r}")
    metrics = text("live_metrics.txt")
    out = re.search(r"^colorcam_frames_output_total (\S+)", metrics, re.M)
    check(text("live_metrics.code") == "200" and out is not None and float(out.group(1)) > 0,
          "live: /metrics is Prometheus text with frames output", f"colorcam_frames_output_total {out.group(1) if out else None}")
    snap = open(os.path.join(WORK, "live_snapshot.jpg"), "rb").read() if os.path.exists(os.path.join(WORK, "live_snapshot.jpg")) else b""
    size = jpeg_size(snap)
    check(text("live_snapshot.code") == "200" and snap.endswith(b"\xff\xd9") and size == (640, 360),
          "live: /snapshot.jpg is a valid JPEG of the capture size", f"{len(snap)} bytes, size {size}")
    # vivid returns as soon as the daemon closes its handle, so the unhealthy window can be shorter than a curl
    # round trip in the emulated guest: judge the daemon's own log of the loss (the server's 503 path is tested in
    # PreviewTests), and /healthz once recovered.
    lost_lines = [l for l in text("live.err").splitlines() if "device lost" in l]
    check(len(lost_lines) >= 1, "live: the loss is logged (and /healthz set to 503 meanwhile)",
          (lost_lines[0][:160] if lost_lines else text("live.err")[-300:]) +
          f"; /healthz 1 s after the disconnect: {text('live_healthz_lost.code')}")
    check(text("live_healthz_back.code") == "200", "live: /healthz back to 200 after recovery", text("live_healthz_back.code"))
    try:
        trace = read_trace(os.path.join(WORK, "live.json"))
        caps, gaps = capture_events(trace)
        ts = [e["ts"] for e in caps]
        # The loss is the longest gap between captures (the trace clock is the run's own).
        intervals = [(b - a, a, b) for a, b in zip(ts, ts[1:])]
        gap_us, before, after = max(intervals)
        summary = next((e["args"] for e in trace if e.get("name") == "summary"), {})
        numbers = sorted([e["args"]["frame"] for e in caps] + gaps)
        check(len(gaps) > 0 and summary.get("driver_gap_frames") == len(gaps)
              and numbers == list(range(numbers[0], numbers[0] + len(numbers))),
              "live: the loss appears as driver_gap drops in the trace",
              f"{len(gaps)} driver_gap drops (summary {summary.get('driver_gap_frames')}); capture ids + drops "
              f"{'contiguous, each once' if numbers == list(range(numbers[0], numbers[0] + len(numbers))) else 'NOT contiguous or repeated'}")
        check(gap_us <= 2_000_000 + 1_000_000,
              "live: capture resumes within 2 s of the device returning (vivid returns when the daemon lets go)",
              f"longest capture gap {gap_us / 1000:.0f} ms (includes vivid's own teardown of the lost stream)")
        after_frames = sum(1 for t in ts if t > after)
        check(after_frames >= 60, "live: frames flow again after recovery", f"{after_frames} captures after the gap")
    except (OSError, ValueError, KeyError) as e:
        check(False, "live: trace readable", str(e))
    stop_ms = int(text("live_stop_us.txt") or 0) / 1000
    check(rc("live") == 0, "live: SIGTERM exits 0", f"exit {rc('live')} after {stop_ms:.0f} ms (guest, emulated)")
    try:
        hdr, frames = read_y4m(os.path.join(WORK, "live.y4m"))
        check(len(frames) > 0, "live: recorded output is a valid .y4m across the device loss", f"{len(frames)} frames")
    except (OSError, ValueError) as e:
        check(False, "live: recorded output is a valid .y4m", str(e))
    rep = subprocess.run([COLORCAM, "trace-report", os.path.join(WORK, "live.json"), "--json"], capture_output=True, text=True)
    check(rep.returncode in (0, 1) and json.loads(rep.stdout or "{}").get("frames", {}).get("output", 0) > 0,
          "live: the trace loads in trace-report", f"exit {rep.returncode}")

# 6b. crash safety: SIGKILL mid-recording (tools/profile/crash_trials.py's checks) ---------------------------------
import importlib.util  # noqa: E402
spec = importlib.util.spec_from_file_location(
    "crash_trials", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools/profile/crash_trials.py"))
crash_trials = importlib.util.module_from_spec(spec)
spec.loader.exec_module(crash_trials)
for t in (1, 2, 3):
    folder = os.path.join(WORK, f"kill{t}")
    if not os.path.isdir(folder):
        check(False, f"record SIGKILL after {t} s: leftovers checked", "no kill folder (guest did not run the step)")
        continue
    row, problems = crash_trials.check_leftovers(COLORCAM, crash_trials.Path(folder))
    check(not problems, f"record SIGKILL after {t} s: trace loads, .y4m is a valid prefix",
          f"trace {row['trace']}, y4m {row['y4m']}" + ("; " + "; ".join(problems) if problems else ""))

# 10. colorcam live --v4l2-output (Tests/vivid/guest_v4l2out.sh) ----------------------------------------------------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_v4l2out  # noqa: E402
check_v4l2out.run(WORK, COLORCAM, check, text, rc)

print()
print(f"vivid suite: {len(failures)} check(s) failed" + (": " + "; ".join(failures) if failures else ""))
sys.exit(1 if failures else 0)
