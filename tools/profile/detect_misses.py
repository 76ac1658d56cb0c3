#!/usr/bin/env python3
"""Why photos are missed: runs `colorcam detect --json` on rendered scenes (as detect_accuracy.py renders them) and
sorts every missed photo (no detection with JI ≥ 0.9) and every false detection into categories, so tuning can
go after the main causes.

  detect_misses.py --set tuning --count 500 --seed 2 [--colorcam .build/release/colorcam] [--list N] [--jobs 2]

Categories of a missed photo (a miss may be in several; the first matching one is its "main" cause):
  occluded       the renderer put a finger across one of its edges
  near-miss      a detection overlaps it with 0.7 ≤ JI < 0.9 (found, corners off)
  inner          a detection lies inside it (JI < 0.7 but its centre inside): inner outline, e.g. picture in border
  merged         a detection contains it and more (JI < 0.7, the photo's centre inside the detection)
  low-contrast   mean |luma step| across its outline < 20 levels (photo edge barely differs from the table)
  small          its shorter side < 0.2 × the frame's shorter side
  blur           scene blur sigma > 0.8
  other          none of the above
Each row also counts the photo's attributes (white border, light table, table kind) to compare with all photos.
False detections: "part" (centre inside a photo, JI < 0.9), "table" (centre on the table).
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
sys.path.insert(0, HERE)


def inside(point, quad):
    quad = np.asarray(quad, np.float64)
    sign = 0
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        cross = (b[0] - a[0]) * (point[1] - a[1]) - (b[1] - a[1]) * (point[0] - a[0])
        if cross != 0:
            if sign == 0:
                sign = np.sign(cross)
            elif np.sign(cross) != sign:
                return False
    return True


def edge_contrast(luma, corners):
    """Mean |luma(outside) − luma(inside)| 3 px either side of the outline, at 40 points per side."""
    corners = np.asarray(corners, np.float64)
    centre = corners.mean(axis=0)
    h, w = luma.shape
    steps = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        d = b - a
        n = np.array([d[1], -d[0]]) / (np.linalg.norm(d) + 1e-9)
        if np.dot((a + b) / 2 - centre, n) < 0:
            n = -n
        for t in np.linspace(0.1, 0.9, 40):
            p = a + d * t
            po, pi = p + 3 * n, p - 3 * n
            xo, yo = int(np.clip(po[0], 0, w - 1)), int(np.clip(po[1], 0, h - 1))
            xi, yi = int(np.clip(pi[0], 0, w - 1)), int(np.clip(pi[1], 0, h - 1))
            steps.append(abs(float(luma[yo, xo]) - float(luma[yi, xi])))
    return float(np.mean(steps))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["tuning", "benchmark"], default="tuning")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    parser.add_argument("--out", default=None)
    parser.add_argument("--list", type=int, default=0, help="print this many missed photos with their scenes")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    args.out = args.out or os.path.join(ROOT, ".build", f"scenes-{args.set}-{args.seed}-{args.count}")
    import cv2
    import detect_accuracy
    import metrics
    truth = detect_accuracy.ensure_scenes(args)

    def run(scene):
        out = subprocess.run([args.colorcam, "detect", os.path.join(args.out, scene["file"]), "--json"],
                             capture_output=True, text=True, check=True)
        return [d["corners"] for d in json.loads(out.stdout)["detections"]]

    with ThreadPoolExecutor(args.jobs) as pool:
        detections = list(pool.map(run, truth["scenes"]))
    causes = collections.Counter()
    main_causes = collections.Counter()
    attributes_missed, attributes_all = collections.Counter(), collections.Counter()
    false_kinds = collections.Counter()
    listed = []
    tp = n_truth = n_det = 0
    for scene, dets in zip(truth["scenes"], detections):
        photos = scene["photos"]
        hits, best = metrics.match(photos, dets)
        tp += hits
        n_truth += len(photos)
        n_det += len(dets)
        luma = None
        short = min(scene["width"], scene["height"])
        for p, photo in enumerate(photos):
            attrs = ["border" if photo["border"] > 0 else "no-border",
                     "light-table" if scene["table"]["light"] else "dark-table", scene["table"]["kind"], photo["style"]]
            attributes_all.update(attrs)
            if best[p] >= 0.9:
                continue
            attributes_missed.update(attrs)
            if luma is None:
                luma = cv2.imread(os.path.join(args.out, scene["file"]), cv2.IMREAD_GRAYSCALE)
            corners = np.asarray(photo["corners"])
            centre = corners.mean(axis=0)
            e1, e3 = corners[1] - corners[0], corners[3] - corners[0]
            side = min(np.linalg.norm(e1), np.linalg.norm(e3))
            jis = [metrics.jaccard(photo["corners"], photo["size"], d) for d in dets]
            mine = []
            if photo["occluded"]:
                mine.append("occluded")
            if any(0.7 <= j < 0.9 for j in jis):
                mine.append("near-miss")
            if any(j < 0.7 and inside(np.mean(d, axis=0), corners) and not inside(centre, d) for j, d in zip(jis, dets)):
                mine.append("inner")
            if any(j < 0.7 and inside(centre, d) for j, d in zip(jis, dets)):
                mine.append("merged")
            contrast = edge_contrast(luma, corners)
            if contrast < 20:
                mine.append("low-contrast")
            if side < 0.2 * short:
                mine.append("small")
            if scene["blur_sigma"] > 0.8:
                mine.append("blur")
            if not mine:
                mine.append("other")
            causes.update(mine)
            main_causes[mine[0]] += 1
            listed.append((scene["file"], p, round(best[p], 3), mine, round(contrast, 1), attrs))
        for d in dets:
            jis = [metrics.jaccard(ph["corners"], ph["size"], d) for ph in photos]
            if any(j >= 0.9 for j in jis):
                continue
            c = np.mean(d, axis=0)
            false_kinds["part" if any(inside(c, ph["corners"]) for ph in photos) else "table"] += 1
    misses = n_truth - tp
    print(f"{args.set} seed {args.seed}: {len(truth['scenes'])} scenes, {n_truth} photos, {n_det} detections; "
          f"recall {100 * tp / max(1, n_truth):.1f}% precision {100 * tp / max(1, n_det):.1f}%; {misses} missed")
    print("missed photos by main cause:", dict(main_causes.most_common()))
    print("missed photos by any cause: ", dict(causes.most_common()))
    print("attribute: missed / all (miss rate)")
    for key in sorted(attributes_all):
        print(f"  {key:>12}: {attributes_missed[key]:4d} / {attributes_all[key]:4d} "
              f"({100 * attributes_missed[key] / attributes_all[key]:.1f}%)")
    print("false detections (not JI ≥ 0.9 with any photo; includes a missed photo's poor detection):",
          dict(false_kinds))
    for row in listed[:args.list]:
        print("  miss:", row)


if __name__ == "__main__":
    main()
