#!/usr/bin/env python3
"""Detection accuracy on rendered scenes: colorcam vs the OpenCV squares baseline, SmartDoc-2015-style Jaccard.

  detect_accuracy.py --set benchmark --count 500 --seed 1 [--colorcam .build/release/colorcam] [--out DIR]

Renders the scenes with tools/scenes/render.py (skipped when DIR/truth.json already matches set/seed/count), runs
`colorcam detect --json` on each and the OpenCV baseline on the same PNGs, and prints recall and precision at
JI ≥ 0.9 for both, plus mean JI of matched photos. --min-recall/--min-precision make it exit 1 when colorcam falls
below them (the short check in `make test` uses this); --require-baseline-beaten also fails when the baseline wins.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))


def ensure_scenes(args):
    truth_path = os.path.join(args.out, "truth.json")
    if os.path.exists(truth_path):
        truth = json.load(open(truth_path))
        if truth.get("set") == args.set and truth.get("seed") == args.seed and len(truth["scenes"]) == args.count:
            return truth
    command = [sys.executable, os.path.join(ROOT, "tools/scenes/render.py"), "scenes", "--set", args.set,
               "--count", str(args.count), "--seed", str(args.seed), "--out", args.out]
    print("rendering:", " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    return json.load(open(truth_path))


def score(name, truth, detections_per_scene):
    import metrics
    tp = n_truth = n_det = 0
    jis = []
    failures = []
    for scene, detections in zip(truth["scenes"], detections_per_scene):
        hits, best = metrics.match(scene["photos"], detections)
        tp += hits
        n_truth += len(scene["photos"])
        n_det += len(detections)
        jis += [b for b in best if b >= 0.9]
        if hits < len(scene["photos"]) or hits < len(detections):
            failures.append((scene["file"], len(scene["photos"]), len(detections), hits, [round(b, 3) for b in best]))
    recall = tp / n_truth if n_truth else 1.0
    precision = tp / n_det if n_det else 1.0
    mean_ji = sum(jis) / len(jis) if jis else 0.0
    return {"name": name, "recall": recall, "precision": precision, "truths": n_truth, "detections": n_det,
            "true_positives": tp, "mean_ji_matched": mean_ji, "failures": failures}


def run_colorcam(binary, truth, directory):
    results = []
    for scene in truth["scenes"]:
        out = subprocess.run([binary, "detect", os.path.join(directory, scene["file"]), "--json"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"colorcam detect failed on {scene['file']}: {out.stderr.strip()}")
        lines = out.stdout.strip().splitlines()
        if len(lines) != 1:
            raise SystemExit(f"colorcam detect --json printed {len(lines)} lines for {scene['file']}, expected 1")
        results.append([d["corners"] for d in json.loads(lines[0])["detections"]])
    return results


def run_baseline(truth, directory):
    import cv2
    import opencv_squares
    cv2.setNumThreads(1)
    results = []
    for scene in truth["scenes"]:
        results.append(opencv_squares.find_squares(cv2.imread(os.path.join(directory, scene["file"]))))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["tuning", "benchmark"], default="benchmark")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    parser.add_argument("--out", default=None)
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--min-recall", type=float, default=None)
    parser.add_argument("--min-precision", type=float, default=None)
    parser.add_argument("--require-baseline-beaten", action="store_true")
    parser.add_argument("--show-failures", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object too")
    args = parser.parse_args()
    args.out = args.out or os.path.join(ROOT, ".build", f"scenes-{args.set}-{args.seed}-{args.count}")
    truth = ensure_scenes(args)
    started = time.time()
    ours = score("colorcam", truth, run_colorcam(args.colorcam, truth, args.out))
    reports = [ours]
    if not args.skip_baseline:
        reports.append(score("opencv-squares", truth, run_baseline(truth, args.out)))
    print(f"scenes: {len(truth['scenes'])} ({args.set} photos, seed {args.seed}), "
          f"{ours['truths']} photos; rendered by: tools/scenes/render.py scenes --set {args.set} "
          f"--count {args.count} --seed {args.seed}")
    for r in reports:
        print(f"{r['name']:>15}: recall {100 * r['recall']:.1f}%  precision {100 * r['precision']:.1f}%  "
              f"({r['true_positives']} TP / {r['truths']} photos / {r['detections']} detections, "
              f"mean JI of matches {r['mean_ji_matched']:.3f})")
    for failure in ours["failures"][:args.show_failures]:
        print("  colorcam miss:", failure)
    if args.json:
        print(json.dumps({r["name"]: {k: v for k, v in r.items() if k != "failures"} for r in reports}))
    print(f"({time.time() - started:.1f} s)", file=sys.stderr)
    ok = True
    if args.min_recall is not None and ours["recall"] < args.min_recall:
        print(f"FAIL: recall {ours['recall']:.3f} < {args.min_recall}")
        ok = False
    if args.min_precision is not None and ours["precision"] < args.min_precision:
        print(f"FAIL: precision {ours['precision']:.3f} < {args.min_precision}")
        ok = False
    if args.require_baseline_beaten and len(reports) > 1:
        base = reports[1]
        if ours["recall"] < base["recall"] or ours["precision"] < base["precision"]:
            print("FAIL: the OpenCV baseline beats colorcam on recall or precision")
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
