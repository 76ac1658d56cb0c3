#!/usr/bin/env python3
"""640x480 RGB <-> Lab on float32: colorcam's SIMD paths vs OpenCV cvtColor, one thread each, in one run.

    python3 tools/profile/lab_vs_opencv.py [--colorcam .build/release/colorcam] [--rounds 5]

Alternates the two (rounds of `colorcam bench lab --runs 30` and 30 OpenCV calls per direction) so machine load hits
both alike, and prints each side's median of per-round p50s and the ratio, for RGB -> Lab (COLOR_RGB2Lab, the
acceptance figure) and Lab -> RGB (COLOR_Lab2RGB). The fastest round is printed too: on a loaded machine it is the
figure least disturbed by other processes. Needs pip opencv-python-headless; exits 1 with a message if it is
missing. Also prints the accuracy of both against the Double definition.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from labcolor import rgb2lab  # noqa: E402

try:
    import cv2
except ImportError:
    sys.exit("lab_vs_opencv: OpenCV is missing: pip install opencv-python-headless")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--colorcam", default=".build/release/colorcam")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    rgb = np.random.default_rng(0).random((480, 640, 3), dtype=np.float32)
    lab_in = cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab)
    rows = {"RGB->Lab": ("RGB float → Lab", cv2.COLOR_RGB2Lab, rgb), "Lab->RGB": ("Lab → RGB float", cv2.COLOR_Lab2RGB, lab_in)}
    ours = {k: [] for k in rows}
    theirs = {k: [] for k in rows}
    for _ in range(args.rounds):
        out = subprocess.run([args.colorcam, "bench", "lab", "--runs", "30"], check=True, capture_output=True, text=True).stdout
        for key, (label, code, src) in rows.items():
            ours[key].append(float(re.search(label + r"\s+([\d.]+) ms", out).group(1)))
            dst = np.empty_like(src)
            ts = []
            for _ in range(30):
                t = time.perf_counter()
                cv2.cvtColor(src, code, dst=dst)
                ts.append(time.perf_counter() - t)
            theirs[key].append(sorted(ts)[len(ts) // 2] * 1e3)
    for key in rows:
        o, t = float(np.median(ours[key])), float(np.median(theirs[key]))
        print(f"{key} float32 640x480, 1 thread: colorcam {o:.2f} ms, OpenCV {cv2.__version__} {t:.2f} ms, "
              f"colorcam/OpenCV = {o / t:.2f}  (fastest round: {min(ours[key]):.2f} vs {min(theirs[key]):.2f} ms)")
    # accuracy on the same frame
    ref = rgb2lab(rgb.astype(np.float64))
    cv = cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab).astype(np.float64)
    tmp = "/tmp/lab_vs_opencv"
    rgb.tofile(tmp + ".in.f32")
    subprocess.run([args.colorcam, "bench", "lab", "--mode", "rgb2lab", "--input", tmp + ".in.f32", "--output",
                    tmp + ".out.f32"], check=True)
    mine = np.fromfile(tmp + ".out.f32", dtype=np.float32).reshape(ref.shape).astype(np.float64)
    de = lambda x: np.sqrt(((x - ref) ** 2).sum(-1)).max()
    print(f"max ΔE vs the Double definition: colorcam {de(mine):.4f}, OpenCV {de(cv):.4f}")


if __name__ == "__main__":
    main()
