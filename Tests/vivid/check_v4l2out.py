"""Checks for Tests/vivid/guest_v4l2out.sh (`colorcam live --v4l2-output` into vivid's looped output node), called by
Tests/vivid/check.py with its `check` function. Frames are matched by the MD5 of their luma plane: the daemon's
.y4m (what it output) against what the reader captured from the looped capture node."""
import bisect
import json
import os
import re
import subprocess


def hashes(work, name):
    path = os.path.join(work, name)
    if not os.path.exists(path):
        return []
    return [line.split() for line in open(path) if line.strip()]


def align(sent, back):
    """Walks the captured frames in order and finds each in the sent list at or after the previous match (a frame
    shows for ~2 captures at 60 fps; the source loops, so a hash may repeat far apart). Returns (for each captured
    frame the index of the sent frame it shows, or None)."""
    shown, pos = [], 0
    for h in back:
        j = next((k for k in range(pos, len(sent)) if sent[k] == h), None)
        shown.append(j)
        if j is not None:
            pos = j
    return shown


def reader_sequences(work, name):
    """The capture node's sequence number of each buffer the reader took (`v4l2-ctl --verbose`)."""
    return [int(m.group(1)) for m in re.finditer(r"seq:\s+(\d+)", open(os.path.join(work, name), errors="replace").read())] \
        if os.path.exists(os.path.join(work, name)) else []


def losses(shown, sequences):
    """The sent frames (between the first and last seen) that no capture shows, split into those lost where the
    reader's own stream skipped sequence numbers (the capture node dropped buffers: the emulated guest falling behind
    its 60 Hz capture) and the rest."""
    seen = sorted({j for j in shown if j is not None})
    missing = [k for k in range(seen[0], seen[-1] + 1) if k not in set(seen)] if seen else []
    at_reader_gap = 0
    for m in missing:
        before = max(i for i, j in enumerate(shown) if j is not None and j < m)
        after = min(i for i, j in enumerate(shown) if j is not None and j > m)
        if len(sequences) == len(shown) and sequences[after] - sequences[before] > after - before:
            at_reader_gap += 1
    return seen, missing, at_reader_gap


def sent_from_trace(work, trace, source):
    """The luma hashes of the frames a run output, in order: the trace's `output` events name the frame numbers, and
    the daemon loops the source clip, so frame n is the clip's frame n mod its length (the simulated inference
    leaves the pixels as they are)."""
    import hashlib
    path = os.path.join(work, source)
    data = open(path, "rb").read()
    pos, clip = data.index(b"\n") + 1, []
    while pos < len(data):
        line_end = data.index(b"\n", pos)
        clip.append(hashlib.md5(data[line_end + 1:line_end + 1 + 640 * 480]).hexdigest())
        pos = line_end + 1 + 640 * 480 * 3 // 2
    text = open(os.path.join(work, trace)).read().rstrip()
    events = json.loads(text if text.endswith("]") else text.rstrip(",") + "]")
    frames = sorted((e["ts"], e["args"]["frame"]) for e in events if e.get("name") == "output" and e.get("ph") == "X")
    return [clip[f % len(clip)] for _, f in frames]


def trace_times(work, trace):
    """The output span starts and the sink_error drop times (µs) of a trace, each sorted."""
    text = open(os.path.join(work, trace)).read().rstrip()
    events = json.loads(text if text.endswith("]") else text.rstrip(",") + "]")
    outputs = sorted(e["ts"] for e in events if e.get("name") == "output" and e.get("ph") == "X")
    errors = sorted(e["ts"] for e in events if e.get("name") == "drop"
                    and (e.get("args") or {}).get("reason") == "sink_error")
    return outputs, errors


def worst_window(times, start_us, end_us):
    """The fewest outputs in any 1-s window starting at an output within [start_us, end_us - 1 s]."""
    inside = [t for t in times if start_us <= t <= end_us - 1_000_000]
    return min((bisect.bisect_left(times, t + 1_000_000) - bisect.bisect_left(times, t)) for t in inside) \
        if inside else None


def report(colorcam, work, trace):
    rep = subprocess.run([colorcam, "trace-report", os.path.join(work, trace), "--json"], capture_output=True, text=True)
    try:
        return json.loads(rep.stdout)
    except ValueError:
        return {}


def run(work, colorcam, check, text, rc):
    for run_name, fmt in (("a", "YUYV"), ("b", "YU12")):
        sent = ([row[0] for row in hashes(work, f"v4l2out_{run_name}_sent.txt")] if run_name == "b"
                else sent_from_trace(work, "v4l2out_a.json", "v4l2out_src.y4m"))
        back = [row[0] for row in hashes(work, f"v4l2out_{run_name}_back.txt")]
        if not check(len(sent) > 0 and len(back) > 0, f"v4l2 output {fmt}: frames sent and read back",
                     f"{len(sent)} in the .y4m, {len(back)} read from the capture node"):
            continue
        shown = align(sent, back)
        unmatched = sum(1 for j in shown if j is None)
        seen, missing, at_gap = losses(shown, reader_sequences(work, f"v4l2out_reader_{run_name}.err"))
        span = len(seen) + len(missing)
        in_order = all(b > a for a, b in zip(seen, seen[1:]))
        arrived = len(seen) / span if span else 0
        # Frames lost where the reader itself skipped buffers are the capture node's loss, not the output's.
        attributable = span - at_gap
        arrived_outside_gaps = len(seen) / attributable if attributable else 0
        # vivid's loop runs in an emulated guest at 60 Hz: its capture node drops buffers (reader sequence gaps) and
        # the loop's timing jitters, so the end-to-end figure varies between runs (with each frame queued together
        # with its repeat, six buffers: 97.1-99.2 % raw in three whole-suite runs, 91.3-98.6 % in six runs of this
        # script alone). The check holds it to 90 % outside the gaps and prints both; what colorcam controls
        # (frames handed to the device) is held to 95 % below.
        check(span >= 50 and arrived_outside_gaps >= 0.90 and in_order and unmatched == 0,
              f"v4l2 output {fmt}: the output frames arrive at the reader, in order, unchanged",
              f"{len(seen)} of the {span} frames output while the reader read ({100 * arrived:.1f} %); of the "
              f"{len(missing)} missing, {at_gap} fell where the capture node dropped buffers (reader sequence gaps): "
              f"{100 * arrived_outside_gaps:.1f} % of the rest arrived; "
              f"{'in order' if in_order else 'OUT OF ORDER'}; {unmatched} captured frames match no output frame")
        r = report(colorcam, work, f"v4l2out_{run_name}.json")
        drops = r.get("drops", {})
        worst = (r.get("output_fps") or {}).get("worst_1s_window_frames")
        check(rc(f"v4l2out_{run_name}") == 0, f"v4l2 output {fmt}: SIGTERM exits 0", f"exit {rc(f'v4l2out_{run_name}')}")
        check(worst is not None and worst >= 29, f"v4l2 output {fmt}: output paced at 30 fps",
              f"worst 1-s window {worst} frames; drops {drops}")
        m = re.search(r"v4l2 output \S+: (\d+) frames written, (\d+) skipped \(busy\), (\d+)", text(f"v4l2out_{run_name}.err"))
        check(m is not None and int(m.group(1)) > 0, f"v4l2 output {fmt}: summary line names the frames written",
              m.group(0) if m else "no summary line")
        if m:
            written, skipped = int(m.group(1)), int(m.group(2)) + int(m.group(3))
            check(written >= 0.95 * (written + skipped), f"v4l2 output {fmt}: >= 95 % of the output frames are "
                  "handed to the device", f"{written} of {written + skipped} ({100 * written / (written + skipped):.1f} %)")
            traced = drops.get("sink_busy", 0) + drops.get("sink_error", 0)
            check(traced == int(m.group(2)) + int(m.group(3)),
                  f"v4l2 output {fmt}: every frame the sink skipped is in the trace",
                  f"trace sink_busy {drops.get('sink_busy', 0)}, sink_error {drops.get('sink_error', 0)}; "
                  f"summary {m.group(2)} busy, {m.group(3)} errors")
    # The reader stopped (SIGSTOP) for 5 s in run A: the other outputs keep 30 fps (checked above over the whole run,
    # which contains the pause) and the sink's drops show in /metrics.
    metric = re.search(r'colorcam_frames_dropped_total\{reason="sink_busy"\} (\d+)', text("v4l2out_metrics.txt"))
    pause_ms = (int(text("v4l2out_pause_end_us.txt") or 0) - int(text("v4l2out_pause_start_us.txt") or 0)) / 1000
    check(metric is not None and pause_ms >= 5000, "v4l2 output: a reader paused 5 s does not stall the daemon; "
          "sink drops are a /metrics counter", f"paused {pause_ms:.0f} ms; sink_busy counter "
          f"{metric.group(1) if metric else 'missing'}")
    # D: the device lost mid-run (vivid disconnect) and reopened. The rate is judged around the loss (from 1 s before
    # the first sink_error to 1 s after the last): elsewhere in the run a dip can only come from the emulated guest
    # stalling the source (frames captured late), which says nothing about the sink; the whole-run figure is printed.
    err = text("v4l2out_d.err")
    m = re.search(r"v4l2 output \S+: (\d+) frames written, (\d+) skipped \(busy\), (\d+) skipped \(device errors\)", err)
    r = report(colorcam, work, "v4l2out_d.json")
    whole = (r.get("output_fps") or {}).get("worst_1s_window_frames")
    outputs, errors = trace_times(work, "v4l2out_d.json")
    around = worst_window(outputs, errors[0] - 1_000_000, errors[-1] + 1_000_000) if errors else None
    frames = r.get("frames", {})
    check("v4l2 output lost" in err and "is back" in err and m is not None and int(m.group(3)) > 0
          and rc("v4l2out_d") == 0 and around is not None and around >= 29
          and frames.get("output") == frames.get("captured"),
          "v4l2 output: a device lost mid-run is reopened; its frames meanwhile are sink_error; the stream holds 30 fps",
          f"{m.group(0) if m else 'no summary'}; back: {'is back' in err}; trace sink_error "
          f"{r.get('drops', {}).get('sink_error')}; worst 1-s window around the loss {around} (whole run {whole}); "
          f"output {frames.get('output')} of {frames.get('captured')} captured; exit {rc('v4l2out_d')}")
    for name, what in (("capnode", "not a video output device"), ("missing", "cannot open output device")):
        err = text(f"v4l2out_{name}.err").strip()
        check(rc(f"v4l2out_{name}") == 69 and what in err and err.count("\n") == 0,
              f"v4l2 output: {what} -> exit 69, one line", f"exit {rc(f'v4l2out_{name}')}: {err}")
