#!/usr/bin/env python3
"""Whose fault is a missed print, the segmenter's or the geometry's? For the domain-randomized stills that
detect_heldout.py renders, runs `colorcam detect --json` and the segmenter model itself (onnxruntime, on the input
as the training packs make it before rounding, `dr_render.cnn_cell_means`: BT.601 full-range Y/Cb/Cr means over 4-px cells at 640x480,
from the PNG's full-resolution chroma where colorcam averages its 4:2:0 planes), and sorts every missed print (best
Jaccard < 0.9) by what the maps show and what the detector made of it.

  detect_map_misses.py --split train --count 300 --seed 90 --texture-instances 9000:10000 \
      [--out DIR] [--detect-model Models/detect-default] [--colorcam BIN] [--list]

Per missed print:
  - interior: the mean interior probability over the cells wholly inside the print (the maps "see" it at >= 0.8);
  - edge: the mean paper-edge probability along its outline;
  - outcome: near (a detection matched with 0.8 <= JI < 0.9), low (0.3-0.8), zero (no detection matched to it).
A miss the maps see (interior >= 0.8) is the geometry's to fix (quads from the maps, the full-resolution edge search,
the checks); one they do not see is the net's (training). The scenes must already be rendered (run detect_heldout.py
with the same --split/--count/--seed/--texture-instances first, or give their folder with --out); the last line is
the counts as JSON. For the tuning sets: never tune on the held-out set.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import dr_render  # noqa: E402
import metrics  # noqa: E402
sys.path.insert(0, HERE)
from detect_heldout import scene_dir  # noqa: E402


def maps_of(session, path):
    """The segmenter's maps [2, gh, gw] for the image at `path`, its input made as the training packs make it
    (`dr_render.cnn_cell_means`, unrounded as colorcam's, normalised as `model.normalise`)."""
    import cv2
    bgr = cv2.imread(path)
    if bgr is None:
        raise SystemExit(f"detect_map_misses: {path}: not a readable image")
    cells = dr_render.cnn_cell_means(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    x = np.stack([cells[0] / 255 - 0.5, (cells[1] - 128) / 128, (cells[2] - 128) / 128])
    return session.run(None, {"frame": x[None]})[0][0]


def print_stats(maps, corners):
    import cv2
    cells = np.round(np.asarray(corners) / 4 * 8).astype(np.int32)
    mask = np.zeros(maps.shape[1:], np.uint8)
    cv2.fillPoly(mask, [cells], 1, shift=3)
    inner = cv2.erode(mask, np.ones((3, 3), np.uint8))
    interior = float(maps[0][(inner if inner.any() else mask) > 0].mean()) if mask.any() else 0.0
    ring = np.zeros_like(mask)
    cv2.polylines(ring, [cells], True, 1, 1, shift=3)
    edge = float(maps[1][ring > 0].mean()) if ring.any() else 0.0
    return interior, edge


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["heldout", "train"], default="train")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=90)
    parser.add_argument("--texture-instances", default="")
    parser.add_argument("--out", help="the rendered scenes' folder (default: detect_heldout.py's for these arguments)")
    parser.add_argument("--detect-model", default=os.path.join(ROOT, "Models", "detect-default"))
    parser.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="one line per missed print")
    args = parser.parse_args()
    import onnxruntime as ort
    directory = args.out or scene_dir(args.split, args.seed, args.count, args.texture_instances)
    truth_path = os.path.join(directory, "truth.json")
    if not os.path.exists(truth_path):
        raise SystemExit(f"detect_map_misses: {truth_path}: missing; render the scenes with detect_heldout.py first")
    truth = json.load(open(truth_path))
    if not truth["scenes"]:
        raise SystemExit(f"detect_map_misses: {truth_path}: no scenes")
    model = args.detect_model
    onnx = model if model.endswith(".onnx") else os.path.join(model, "model.onnx")
    session = ort.InferenceSession(onnx)

    def detect(scene):
        out = subprocess.run([args.colorcam, "detect", os.path.join(directory, scene["file"]), "--json",
                              "--detect-model", model], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"colorcam detect failed on {scene['file']}: {out.stderr.strip()}")
        return [d["corners"] for d in json.loads(out.stdout.strip().splitlines()[-1])["detections"]]
    with ThreadPoolExecutor(args.workers) as pool:
        detections = list(pool.map(detect, truth["scenes"]))
    prints = misses = 0
    table = collections.Counter()
    rows = []
    for scene, found in zip(truth["scenes"], detections):
        _, best = metrics.match(scene["photos"], found)
        maps = None
        for photo, ji in zip(scene["photos"], best):
            prints += 1
            if ji >= 0.9:
                continue
            misses += 1
            if maps is None:
                maps = maps_of(session, os.path.join(directory, scene["file"]))
            interior, edge = print_stats(maps, photo["corners"])
            seen = "maps see it" if interior >= 0.8 else "maps do not"
            outcome = "near" if ji >= 0.8 else "low" if ji >= 0.3 else "zero"
            table[(seen, outcome)] += 1
            rows.append((scene["file"], scene["table"]["kind"], ji, interior, edge,
                         [b for b in photo["buckets"] if b in ("hand", "overlap", "border", "small")]))
    print(f"{directory}: {prints} prints, {misses} missed (JI < 0.9), model {onnx}")
    for seen in ("maps see it", "maps do not"):
        n = sum(v for (s, _), v in table.items() if s == seen)
        parts = ", ".join(f"{o} {table[(seen, o)]}" for o in ("near", "low", "zero"))
        print(f"  {seen:12s} {n:4d} ({100 * n / max(1, misses):.0f} %): {parts}")
    counts = {"prints": prints, "missed": misses,
              "maps_see": {o: table[("maps see it", o)] for o in ("near", "low", "zero")},
              "maps_do_not": {o: table[("maps do not", o)] for o in ("near", "low", "zero")}}
    if args.list:
        for f, kind, ji, interior, edge, buckets in sorted(rows, key=lambda r: -r[3]):
            print(f"  {f} {kind:12s} JI {ji:.2f} interior {interior:.2f} edge {edge:.2f} {' '.join(buckets)}")
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
