#!/usr/bin/env python3
"""Crash safety: SIGKILL `colorcam replay` at seeded random moments and check what it leaves behind.

    python3 tools/profile/crash_trials.py [--colorcam .build/release/colorcam] [--trials 20] [--seed 1]
                                          [--frames 30] [--clip scene.y4m]

Each trial runs `colorcam replay CLIP --output out.y4m --trace t.json` (odd trials with --passthrough, even ones
with the default model, Models/colorcam-default), kills it with SIGKILL after a delay drawn uniformly from
[0, 1.1 × the mode's measured run time] (seeded), then checks:
  - the trace, if it exists under its name, loads in `colorcam trace-report` with exit 0 or 1 (never 65/70);
    a truncated one says "truncated";
  - every Y4M file left (out.y4m, or the temporary .out.y4m.tmp-PID) parses as header + whole frames, plus at most
    one cut frame at the end only in the temporary; ffprobe counts exactly the whole frames;
  - out.y4m, when it exists, has no cut frame (it is only renamed into place once complete).
Prints one table row per trial and a summary; exits 1 if any trial fails a check.
The clip is tools/demo/scene.py --frames N (rendered once into the work folder unless --clip is given).
record needs a V4L2 device and is not covered here (see Sources/Stream/README.md).
"""
import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def y4m_layout(path):
    """Parses a YUV4MPEG2 file: (whole_frames, cut_bytes, frame_bytes). Raises ValueError when it is not Y4M."""
    data = Path(path).read_bytes()
    end = data.find(b"\n")
    if not data.startswith(b"YUV4MPEG2 ") or end < 0:
        raise ValueError(f"{path}: no complete YUV4MPEG2 header ({len(data)} bytes)")
    params = dict((p[:1], p[1:]) for p in data[10:end].split())
    width, height = int(params[b"W"]), int(params[b"H"])
    chroma = params.get(b"C", b"420jpeg").decode()
    luma = width * height
    if chroma.startswith("420"):
        frame_bytes = luma + 2 * (((width + 1) // 2) * ((height + 1) // 2))
    elif chroma.startswith("422"):
        frame_bytes = luma + 2 * (((width + 1) // 2) * height)
    elif chroma.startswith("444"):
        frame_bytes = 3 * luma
    elif chroma.startswith("mono"):
        frame_bytes = luma
    else:
        raise ValueError(f"{path}: chroma {chroma} not handled here")
    offset, frames = end + 1, 0
    while offset < len(data):
        line_end = data.find(b"\n", offset, offset + 256)
        if line_end < 0:
            return frames, len(data) - offset, frame_bytes  # cut inside a FRAME line
        if not data.startswith(b"FRAME", offset):
            raise ValueError(f"{path}: byte {offset}: expected FRAME")
        if line_end + 1 + frame_bytes > len(data):
            return frames, len(data) - offset, frame_bytes  # cut inside the pixels
        offset = line_end + 1 + frame_bytes
        frames += 1
    return frames, 0, frame_bytes


def ffprobe_frames(path):
    """Frames ffprobe decodes from the file (nb_read_frames), or None when it cannot read it."""
    proc = subprocess.run(["ffprobe", "-v", "error", "-f", "yuv4mpegpipe", "-count_frames", "-select_streams", "v:0",
                           "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", str(path)],
                          capture_output=True, text=True)
    match = re.match(r"\s*(\d+)", proc.stdout)
    return int(match.group(1)) if proc.returncode == 0 and match else None


def check_leftovers(colorcam, folder, cwd=ROOT):
    """Checks one killed run's folder. Returns (row dict, list of failure strings)."""
    failures, row = [], {}
    trace = folder / "t.json"
    if trace.exists():
        proc = subprocess.run([colorcam, "trace-report", str(trace)], capture_output=True, text=True, cwd=cwd)
        row["trace"] = f"{trace.stat().st_size}B rc{proc.returncode}" + (" trunc" if "truncated" in proc.stdout else "")
        if proc.returncode not in (0, 1):
            failures.append(f"trace-report exit {proc.returncode}: {proc.stderr.strip()}")
    else:
        row["trace"] = "none"
    temps = sorted(folder.glob(".t.json.tmp-*"))
    if temps:
        row["trace"] += f" +tmp({temps[0].stat().st_size}B)"
    videos = [(p, False) for p in [folder / "out.y4m"] if p.exists()]
    videos += [(p, True) for p in sorted(folder.glob(".out.y4m.tmp-*"))]
    row["y4m"] = "none"
    for path, temporary in videos:
        try:
            frames, cut, _ = y4m_layout(path)
        except ValueError as error:
            if temporary and path.stat().st_size < 128:
                row["y4m"] = f"tmp header-cut {path.stat().st_size}B"  # killed while writing the header
                continue
            failures.append(str(error))
            continue
        probed = ffprobe_frames(path)
        row["y4m"] = f"{'tmp' if temporary else 'final'} {frames}f cut{cut}B ffprobe {probed}"
        if frames == 0 and temporary and probed is None:
            continue  # killed after the header, before the first frame: a valid empty prefix ffprobe has nothing to read
        if probed != frames:
            failures.append(f"{path.name}: {frames} whole frames, ffprobe reads {probed}")
        if cut and not temporary:
            failures.append(f"{path.name}: final output ends in a cut frame ({cut} bytes)")
    return row, failures


def scene(folder, frames):
    clip = folder / f"scene{frames}.y4m"
    if not clip.exists():
        subprocess.run([sys.executable, str(ROOT / "tools/demo/scene.py"), "--out", str(clip), "--truth",
                        str(folder / "truth.json"), "--frames", str(frames), "--quiet"], check=True)
    return clip


def replay_args(colorcam, clip, folder, passthrough):
    args = [colorcam, "replay", str(clip), "--output", str(folder / "out.y4m"), "--trace", str(folder / "t.json"),
            "--quiet"]
    return args + (["--passthrough"] if passthrough else [])


def measure(colorcam, clip, work, passthrough):
    folder = Path(tempfile.mkdtemp(dir=work))
    start = time.monotonic()
    subprocess.run(replay_args(colorcam, clip, folder, passthrough), check=True, cwd=ROOT)
    return time.monotonic() - start


def trial(colorcam, clip, work, passthrough, delay_s):
    """One kill. Returns (row, failures)."""
    folder = Path(tempfile.mkdtemp(dir=work))
    proc = subprocess.Popen(replay_args(colorcam, clip, folder, passthrough), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay_s)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    row, failures = check_leftovers(colorcam, folder)
    row["end"] = "killed" if killed else f"exit {proc.returncode}"
    return row, failures


def run_trials(colorcam, clip, work, trials, seed, out=sys.stdout):
    """Runs the trials and prints the table; returns the list of (trial, failures) that failed."""
    rng = random.Random(seed)
    durations = {mode: measure(colorcam, clip, work, mode) for mode in (True, False)}
    print(f"clip {clip.name}; unkilled run: passthrough {durations[True]:.2f} s, model {durations[False]:.2f} s",
          file=out)
    print(f"{'#':>3} {'mode':<11} {'kill_ms':>7} {'end':<8} {'trace':<28} {'y4m':<36} ok", file=out)
    failed = []
    for index in range(trials):
        passthrough = index % 2 == 0
        delay = rng.uniform(0, 1.1 * durations[passthrough])
        row, failures = trial(colorcam, clip, work, passthrough, delay)
        mode = "passthrough" if passthrough else "model"
        print(f"{index:>3} {mode:<11} {delay * 1000:>7.0f} {row['end']:<8} {row['trace']:<28} {row['y4m']:<36} "
              f"{'yes' if not failures else 'NO: ' + '; '.join(failures)}", file=out)
        if failures:
            failed.append((index, failures))
    print(f"{trials - len(failed)}/{trials} trials left only loadable traces and valid Y4M prefixes", file=out)
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--colorcam", default=str(ROOT / ".build/release/colorcam"))
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--clip", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="crash-trials-") as work:
        work = Path(work)
        clip = args.clip.resolve() if args.clip else scene(work, args.frames)
        failed = run_trials(str(Path(args.colorcam).resolve()), clip, work, args.trials, args.seed)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
