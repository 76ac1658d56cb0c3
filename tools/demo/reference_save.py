#!/usr/bin/env python3
"""Writes what `--save-photos DIR` should hold for the demo scene, made from the ground truth instead of the
detector: a reference for score.py (its figures with perfect detection) and a known-good input for its tests.

    python3 tools/demo/reference_save.py --scene demo/scene.y4m --truth demo/truth.json --out DIR
                                         [--colorcam BIN [--model M]] [--long-side 256]

Per print (track ids 1, 2, 3 in truth order): its middle still frame is decoded (BT.601 full range, nearest
chroma), rectified through the true corners to an upright image (long side --long-side, the print's aspect), and
colorized with `colorcam colorize` when --colorcam is given (else kept as the grey capture). Writes
DIR/photo-<id>.png and DIR/photo-<id>.json in the --save-photos format.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import render  # noqa: E402
from y4m import Y4MReader, ycbcr_to_rgb  # noqa: E402


def rectify(rgb, corners, width, height):
    """Upright width×height image of the quad `corners` (clockwise from top-left, continuous pixel coordinates)."""
    src = np.asarray(corners, np.float32)
    dst = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    h = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    return cv2.warpPerspective(rgb.astype(np.float32), render.cv_matrix(h), (width, height),
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scene", required=True)
    parser.add_argument("--truth", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--colorcam")
    parser.add_argument("--model")
    parser.add_argument("--long-side", type=int, default=256)
    args = parser.parse_args()
    truth = json.load(open(args.truth))
    wanted = {}
    for track, p in enumerate(truth["prints"], start=1):
        frame = (p["rest_frames"][0] + p["rest_frames"][1]) // 2
        wanted.setdefault(frame, []).append((track, p))
    os.makedirs(args.out, exist_ok=True)
    with Y4MReader(args.scene) as reader:
        for index, (y, cb, cr) in enumerate(reader):
            for track, p in wanted.get(index, []):
                entry = next(e for e in truth["frames"][index]["photos"] if e["print"] == p["print"])
                pw, ph = entry["size"]
                scale = args.long_side / max(pw, ph)
                width, height = round(pw * scale), round(ph * scale)
                image = rectify(ycbcr_to_rgb(y, cb, cr), entry["corners"], width, height)
                image = np.clip(image + 0.5, 0, 255).astype(np.uint8)
                png = os.path.join(args.out, f"photo-{track}.png")
                model = "none (grey capture)"
                if args.colorcam:
                    with tempfile.TemporaryDirectory() as tmp:
                        grey = os.path.join(tmp, "in.png")
                        cv2.imwrite(grey, cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
                        command = [args.colorcam, "colorize", grey, png]
                        command += ["--model", args.model] if args.model else []
                        proc = subprocess.run(command, capture_output=True, text=True)
                        if proc.returncode != 0:
                            sys.exit(f"reference_save: {' '.join(command)} exited {proc.returncode}: "
                                     f"{proc.stderr.strip()}")
                    model = args.model or "default"
                else:
                    cv2.imwrite(png, cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
                meta = {"track": track, "first_frame": p["first_frame"], "last_frame": p["last_frame"],
                        "corners": entry["corners"], "model": model, "width": width, "height": height}
                with open(os.path.join(args.out, f"photo-{track}.json"), "w") as out:
                    json.dump(meta, out)
                print(f"reference_save: {png} ({width}x{height}) from frame {index}, print {p['print']} {p['photo']}")


if __name__ == "__main__":
    main()
