#!/usr/bin/env python3
"""Detection on the held-out domain-randomized stills: recall / precision at Jaccard ≥ 0.9 overall and per condition
bucket, for one or more detector configurations side by side.

  detect_heldout.py [--count 1000] [--seed 7] [--colorcam BIN] [--config NAME=ARGS …] [--sheet OUT.png] [--json]

Scenes: tools/scenes/dr_render.py stills --split heldout (held-out table instances and held-out photos only; rendered
once into .build/dr-heldout-SEED-COUNT). Each --config is a name and the extra `colorcam detect` arguments, e.g.
  --config "classic=--detector classic" --config "learned=--detector learned"
(default: one config, colorcam's defaults). Buckets: the table family (wood, cloth incl. leather, stone, paper-cork,
carpet, plain-light, plain-dark, glossy, procedural), hand (a hand over part of the print), overlap (prints overlapping
a little), tilt>=35 (camera tilt ≥ 35°), no-border / border, small (short side < 20 % of the frame's).
--min-recall / --min-precision / --min-bucket-recall make it exit 1 (on the first config) when a figure is below.
--sheet draws the worst scenes of the first config (misses first): truth green, detections red.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import dr_render  # noqa: E402
import dr_textures  # noqa: E402
import metrics  # noqa: E402

BUCKETS = ["wood", "cloth", "stone", "paper-cork", "carpet", "plain-light", "plain-dark", "glossy", "procedural",
           "hand", "overlap", "tilt>=35", "no-border", "border", "small"]


def scene_dir(split, seed, count, instances="", hands="plain"):
    """Where the stills of these arguments are rendered once (.build/dr-SPLIT-SEED-COUNT[-tLO-HI][-arms])."""
    tag = f"-t{instances.replace(':', '-')}" if instances else ""
    tag += "" if hands == "plain" else f"-{hands}"
    return os.path.join(ROOT, ".build", f"dr-{split}-{seed}-{count}{tag}")


def ensure_scenes(count, seed, out, split, instances="", hands="plain"):
    truth_path = os.path.join(out, "truth.json")
    want = list(dr_textures.instance_range(instances, split))
    if os.path.exists(truth_path):
        truth = json.load(open(truth_path))
        if (truth.get("seed") == seed and len(truth["scenes"]) == count and truth.get("split") == split
                and truth.get("texture_instances", [0, dr_textures.INSTANCES_PER_KIND[split]]) == want
                and truth.get("hands", "plain") == hands):
            return truth
    command = [sys.executable, os.path.join(ROOT, "tools/scenes/dr_render.py"), "stills", "--split", split,
               "--count", str(count), "--seed", str(seed), "--out", out]
    if instances:
        command += ["--texture-instances", instances]
    if hands != "plain":
        command += ["--hands", hands]
    print("rendering:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    return json.load(open(truth_path))


def detect_all(binary, extra, truth, directory, workers):
    def one(scene):
        out = subprocess.run([binary, "detect", os.path.join(directory, scene["file"]), "--json"] + extra,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"colorcam detect failed on {scene['file']}: {out.stderr.strip()}")
        return [d["corners"] for d in json.loads(out.stdout.strip().splitlines()[-1])["detections"]]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, truth["scenes"]))


def score(truth, detections):
    per_bucket = {b: [0, 0] for b in BUCKETS}
    tp = n_truth = n_det = tp8 = 0
    worst = []
    for scene, found in zip(truth["scenes"], detections):
        hits, best = metrics.match(scene["photos"], found)
        hits8, _ = metrics.match(scene["photos"], found, threshold=0.8)
        tp += hits; tp8 += hits8
        n_truth += len(scene["photos"]); n_det += len(found)
        for photo, b in zip(scene["photos"], best):
            for bucket in photo["buckets"]:
                if bucket in per_bucket:
                    per_bucket[bucket][1] += 1
                    per_bucket[bucket][0] += int(b >= 0.9)
        misses = sum(1 for b in best if b < 0.9) + max(0, len(found) - hits)
        if misses:
            worst.append((misses, scene, found, best))
    worst.sort(key=lambda w: -w[0])
    return {"recall": tp / max(1, n_truth), "precision": tp / max(1, n_det), "recall_ji08": tp8 / max(1, n_truth),
            "truths": n_truth, "detections": n_det, "tp": tp,
            "buckets": {b: {"recall": (v[0] / v[1]) if v[1] else None, "n": v[1]} for b, v in per_bucket.items()},
            "worst": worst}


def sheet(path, directory, worst, limit=24):
    import cv2
    tiles = []
    for misses, scene, found, best in worst[:limit]:
        image = cv2.imread(os.path.join(directory, scene["file"]))
        for photo in scene["photos"]:
            cv2.polylines(image, [np.round(np.array(photo["corners"])).astype(np.int32)], True, (0, 200, 0), 2)
        for corners in found:
            cv2.polylines(image, [np.round(np.array(corners)).astype(np.int32)], True, (0, 0, 255), 1)
        text = f"{scene['file']} {scene['table']['kind']} tilt {scene['camera']['tilt_deg']:.0f}"
        cv2.putText(image, text, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 2)
        tiles.append(cv2.resize(image, (320, 240), interpolation=cv2.INTER_AREA))
    if not tiles:
        return
    while len(tiles) % 4:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + 4]) for i in range(0, len(tiles), 4)]
    cv2.imwrite(path, np.vstack(rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["heldout", "train"], default="heldout",
                    help="train: a tuning set of training-split scenes (what thresholds may be chosen on)")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    ap.add_argument("--config", action="append", default=None, help="NAME=extra colorcam detect arguments")
    ap.add_argument("--texture-instances", default="", metavar="LO:HI",
                    help="draw the tables from these instances of the split (dr_render.py --texture-instances); "
                         "--split train --texture-instances 9000:10000 is the validation set of unseen tables")
    ap.add_argument("--hands", choices=dr_render.HAND_STYLES, default="plain",
                    help="the scenes' hands (dr_render.py --hands): plain, or arms — the same scenes, each hand with a "
                         "thumb and a forearm to the frame's edge")
    ap.add_argument("--out", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sheet", default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--min-recall", type=float, default=None)
    ap.add_argument("--min-precision", type=float, default=None)
    ap.add_argument("--min-bucket-recall", type=float, default=None)
    args = ap.parse_args()
    if args.split == "train" and args.seed not in dr_render.TUNING_SEEDS:
        print(f"detect_heldout: warning: train-split seed {args.seed} is not a tuning seed "
              f"({dr_render.TUNING_SEEDS.start}-{dr_render.TUNING_SEEDS.stop - 1}); its scenes may be in a training "
              "pack", file=sys.stderr)
    try:
        dr_textures.instance_range(args.texture_instances, args.split)
    except ValueError as e:
        ap.error(str(e))
    out = args.out or scene_dir(args.split, args.seed, args.count, args.texture_instances, args.hands)
    truth = ensure_scenes(args.count, args.seed, out, args.split, args.texture_instances, args.hands)
    if not truth["scenes"] or not any(s["photos"] for s in truth["scenes"]):
        raise SystemExit("detect_heldout: the rendered set holds no prints")
    configs = []
    for text in args.config or ["colorcam="]:
        name, _, extra = text.partition("=")
        configs.append((name, shlex.split(extra)))
    results = {}
    for name, extra in configs:
        started = time.time()
        results[name] = score(truth, detect_all(args.colorcam, extra, truth, out, args.workers))
        print(f"({name}: {time.time() - started:.0f} s)", file=sys.stderr)
    names = [n for n, _ in configs]
    print(f"{args.split} stills: {len(truth['scenes'])} (dr_render.py stills --split {args.split} --count {args.count} "
          f"--seed {args.seed}{' --texture-instances ' + args.texture_instances if args.texture_instances else ''}"
          f"{' --hands ' + args.hands if args.hands != 'plain' else ''}), "
          f"{results[names[0]]['truths']} prints; recall at Jaccard >= 0.9")
    print(f"{'':>18}" + "".join(f"{n:>14}" for n in names))
    print(f"{'overall recall':>18}" + "".join(f"{100 * results[n]['recall']:>13.1f}%" for n in names))
    print(f"{'precision':>18}" + "".join(f"{100 * results[n]['precision']:>13.1f}%" for n in names))
    print(f"{'recall at JI>=0.8':>18}" + "".join(f"{100 * results[n]['recall_ji08']:>13.1f}%" for n in names))
    for b in BUCKETS:
        cells = []
        for n in names:
            v = results[n]["buckets"][b]
            cells.append(f"{100 * v['recall']:>13.1f}%" if v["recall"] is not None else f"{'-':>14}")
        print(f"{b + ' (' + str(results[names[0]]['buckets'][b]['n']) + ')':>18}" + "".join(cells))
    if args.sheet:
        sheet(args.sheet, out, results[names[0]]["worst"])
    if args.json:
        print(json.dumps({n: {k: v for k, v in r.items() if k != "worst"} for n, r in results.items()}))
    first = results[names[0]]
    ok = True
    if args.min_recall is not None and first["recall"] < args.min_recall:
        print(f"FAIL: recall {first['recall']:.3f} < {args.min_recall}"); ok = False
    if args.min_precision is not None and first["precision"] < args.min_precision:
        print(f"FAIL: precision {first['precision']:.3f} < {args.min_precision}"); ok = False
    if args.min_bucket_recall is not None:
        for b, v in first["buckets"].items():
            if v["recall"] is not None and v["n"] >= 10 and v["recall"] < args.min_bucket_recall:
                print(f"FAIL: bucket {b} recall {v['recall']:.3f} < {args.min_bucket_recall}"); ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
