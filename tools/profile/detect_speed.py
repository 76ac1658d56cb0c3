#!/usr/bin/env python3
"""Detection speed: `colorcam bench detect` (detect + track per frame) beside the OpenCV squares baseline, same
frames, one core each.

  detect_speed.py [--set benchmark] [--seed 1] [--frames 150] [--colorcam .build/release/colorcam]

Renders one 640×480 sequence (tools/scenes/render.py sequence, cached under .build/sequences), runs
`colorcam bench detect` on it, then times opencv_squares.find_squares on the same frames (decoded from the .y4m,
cv2.setNumThreads(1)). Prints p50/p90 per frame for both: wall time, and the thread's CPU time (the cost on one
core when other processes share the machine), and the ratio. --max-p50-cpu-ms makes it exit 1 above a limit.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))


def read_y4m(path, limit):
    with open(path, "rb") as f:
        header = f.readline().split()
        width = int([h for h in header if h.startswith(b"W")][0][1:])
        height = int([h for h in header if h.startswith(b"H")][0][1:])
        cw, ch = (width + 1) // 2, (height + 1) // 2
        frames = []
        while len(frames) < limit:
            line = f.readline()
            if not line:
                break
            y = np.frombuffer(f.read(width * height), np.uint8).reshape(height, width)
            cb = np.frombuffer(f.read(cw * ch), np.uint8).reshape(ch, cw)
            cr = np.frombuffer(f.read(cw * ch), np.uint8).reshape(ch, cw)
            frames.append((y, cb, cr))
    return frames


def to_bgr(y, cb, cr):
    import cv2
    h, w = y.shape
    cbu = cv2.resize(cb, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32) - 128
    cru = cv2.resize(cr, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32) - 128
    yf = y.astype(np.float32)
    r = yf + 1.402 * cru
    g = yf - 0.344136 * cbu - 0.714136 * cru
    b = yf + 1.772 * cbu
    return np.clip(np.stack([b, g, r], -1) + 0.5, 0, 255).astype(np.uint8)


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(np.ceil(q * len(values))) - 1))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["tuning", "benchmark"], default="benchmark")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    parser.add_argument("--out", default=os.path.join(ROOT, ".build", "sequences"))
    parser.add_argument("--max-p50-cpu-ms", type=float)
    args = parser.parse_args()
    directory = os.path.join(args.out, f"{args.set}-{args.seed}-10s")
    if not os.path.exists(os.path.join(directory, "truth.json")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools/scenes/render.py"), "sequence", "--set", args.set,
                        "--seed", str(args.seed), "--seconds", "10", "--out", directory], check=True)
    clip = os.path.join(directory, "sequence.y4m")
    ours = json.loads(subprocess.run([args.colorcam, "bench", "detect", clip, "--frames", str(args.frames),
                                      "--repeat", "2", "--json"], capture_output=True, text=True, check=True).stdout)
    import cv2
    import opencv_squares
    cv2.setNumThreads(1)
    frames = [to_bgr(*f) for f in read_y4m(clip, args.frames)]
    opencv_squares.find_squares(frames[0])  # warm-up
    wall, cpu = [], []
    for frame in frames:
        w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        opencv_squares.find_squares(frame)
        wall.append((time.perf_counter_ns() - w0) / 1e6)
        cpu.append((time.thread_time_ns() - c0) / 1e6)
    base = {"p50_ms": pct(wall, 0.5), "p90_ms": pct(wall, 0.9), "cpu_p50_ms": pct(cpu, 0.5), "cpu_p90_ms": pct(cpu, 0.9),
            "cpu_mean_ms": sum(cpu) / len(cpu)}
    print(f"clip: {clip} ({ours['width']}x{ours['height']}, {ours['frames']} frames; rendered by tools/scenes/render.py "
          f"sequence --set {args.set} --seed {args.seed} --seconds 10)")
    print(f"  colorcam detect+track: wall p50 {ours['p50_ms']:.2f} ms p90 {ours['p90_ms']:.2f} ms | "
          f"thread CPU p50 {ours['cpu_p50_ms']:.2f} ms p90 {ours['cpu_p90_ms']:.2f} ms mean {ours['cpu_mean_ms']:.2f} ms "
          f"(full search every 3rd frame)")
    print(f"  opencv squares       : wall p50 {base['p50_ms']:.2f} ms p90 {base['p90_ms']:.2f} ms | "
          f"thread CPU p50 {base['cpu_p50_ms']:.2f} ms p90 {base['cpu_p90_ms']:.2f} ms mean {base['cpu_mean_ms']:.2f} ms")
    print(f"  ratio (opencv / colorcam, thread CPU): p50 {base['cpu_p50_ms'] / ours['cpu_p50_ms']:.1f}x, "
          f"mean {base['cpu_mean_ms'] / ours['cpu_mean_ms']:.1f}x")
    if args.max_p50_cpu_ms is not None and ours["cpu_p50_ms"] > args.max_p50_cpu_ms:
        print(f"FAIL: colorcam thread-CPU p50 {ours['cpu_p50_ms']:.2f} ms > {args.max_p50_cpu_ms} ms")
        sys.exit(1)


if __name__ == "__main__":
    main()
