#!/usr/bin/env python3
"""Keepsakes without hands: the photo `--save-photos` keeps of each print must be a view with nothing over it.

  keepsake_check.py [--count 6] [--seed 31] [--split heldout] [--colorcam BIN] [--out DIR] [--max-cover 0.005]

Renders `--count` clips with tools/scenes/dr_render.py hands (still prints, a hand lying over one of them for the
first 15–30 frames, then drawn away), replays each with `colorcam replay --pace asap --save-photos`, and looks each
saved photo up in the generator's truth: the print it shows (the truth print whose outline at the saved view's frame
overlaps the saved corners most) and how much of it the hand covered in that frame. Prints one line per clip and a
summary; exits 1 when a saved photo of a black-and-white or toned print shows more than --max-cover of it under the
hand, or when no covered print was ever saved (the check would then say nothing). Colour prints are reported apart
and do not fail the check: colorcam tells what lies over a print by its one tone, which a colour print has not.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import cv2  # noqa: E402
import metrics  # noqa: E402
import numpy as np  # noqa: E402


def overlap(a, b):
    """Intersection over union of two convex quads (corner lists)."""
    inter, _ = cv2.intersectConvexConvex(np.float32(a), np.float32(b))
    union = metrics.polygon_area(a) + metrics.polygon_area(b) - float(inter)
    return float(inter) / union if union > 0 else 0.0


def check_clip(args, seed, out):
    clip = os.path.join(out, f"clip-{seed}")
    truth_path = os.path.join(clip, "truth.json")
    if not os.path.exists(truth_path):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools/scenes/dr_render.py"), "hands", "--split",
                        args.split, "--seed", str(seed), "--out", clip], check=True)
    truth = json.load(open(truth_path))
    photos_dir = os.path.join(clip, "photos")
    subprocess.run(["rm", "-rf", photos_dir], check=True)
    run = subprocess.run([args.colorcam, "replay", os.path.join(clip, "sequence.y4m"), "--pace", "asap",
                          "--save-photos", photos_dir, "--quiet"], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"clip {seed}: colorcam replay failed ({run.returncode}): {run.stderr.strip()}")
    saved = []
    for path in sorted(glob.glob(os.path.join(photos_dir, "photo-*.json"))):
        photo = json.load(open(path))
        frame = truth["frames"][photo["frame"]]
        ious = [overlap(photo["corners"], p["corners"]) for p in frame["photos"]]
        best = max(range(len(ious)), key=lambda i: ious[i])
        saved.append({"file": os.path.basename(path), "frame": photo["frame"], "print": best, "iou": ious[best],
                      "hand_cover": frame["photos"][best]["hand_cover"], "covered_measured": photo.get("covered"),
                      "colour": frame["photos"][best]["style"] == "colour"})
    return truth, saved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--split", choices=["train", "heldout"], default="heldout")
    ap.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    ap.add_argument("--out", default=os.path.join(ROOT, ".build/keepsake"))
    ap.add_argument("--max-cover", type=float, default=0.005)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failures, colour_failures, views, covered_prints_saved = [], [], 0, 0
    for k in range(args.count):
        seed = args.seed + k
        truth, saved = check_clip(args, seed, args.out)
        target = truth["hand_print"]
        hand_saved = [s for s in saved if s["print"] == target]
        covered_prints_saved += bool(hand_saved)
        views += len(saved)
        bad = [s for s in saved if s["hand_cover"] > args.max_cover and not s["colour"]]
        failures += [(seed, s) for s in bad]
        colour_failures += [(seed, s) for s in saved if s["hand_cover"] > args.max_cover and s["colour"]]
        worst = max((s["hand_cover"] for s in saved), default=0.0)
        style = truth["frames"][0]["photos"][target]["style"]
        print(f"clip {seed}: {len(truth['frames'][0]['photos'])} prints, hand over print {target} ({style}) for "
              f"{truth['hand_frames']} frames; {len(saved)} saved; the covered print saved from frame "
              f"{[s['frame'] for s in hand_saved]} (measured cover {[s['covered_measured'] for s in hand_saved]}); "
              f"worst hand cover in a saved view {100 * worst:.1f} %{'  FAIL' if bad else ''}")
    print(f"keepsakes: {views} saved views in {args.count} clips, {len(failures)} of black-and-white or toned prints "
          f"with the hand over the print (> {100 * args.max_cover:.1f} % of it), {len(colour_failures)} of colour "
          f"prints (not judged); the covered print was saved in {covered_prints_saved} of {args.count} clips")
    if failures or covered_prints_saved == 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
