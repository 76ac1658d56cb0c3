#!/usr/bin/env python3
"""Detection coverage of the demo scene: do colorcam's tracked detections match the ground-truth prints?

    python3 tools/demo/coverage.py --truth demo/truth.json [--detections det.jsonl | --colorcam BIN --scene SCENE.y4m]
                                   [--min-coverage F] [--json]

Reads `colorcam detect SCENE.y4m --json` output (one JSON object per frame and line), or runs it. Per print and
frame, the best detection is matched one-to-one (tools/scenes/metrics.py: SmartDoc Jaccard index in the print's
own upright frame, TP at JI ≥ 0.9). Reports per print:
  - coverage: matched frames / frames where the print lies still in full view ("rest" frames), and the same over
    every frame where it is wholly in view (including the last frames of a slide);
  - track ids: the distinct track ids matched to it (1 means one physical photo kept one id);
  - first match: the first matched frame versus the first rest frame (the tracker's warm-up).
And overall: rest-frame coverage and false detections (detections matching no print, JI < 0.5 to every print).
--min-coverage makes it exit 1 when the overall rest-frame coverage is lower.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import metrics  # noqa: E402


def load_detections(args):
    if args.detections:
        text = open(args.detections).read()
    else:
        proc = subprocess.run([args.colorcam, "detect", args.scene, "--json"], capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"coverage: colorcam detect exited {proc.returncode}: {proc.stderr.strip()}")
        text = proc.stdout
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {line.get("frame", i): line["detections"] for i, line in enumerate(lines)}


def evaluate(truth, detections):
    prints = {p["print"]: p for p in truth["prints"]}
    stats = {k: {"rest": 0, "rest_hit": 0, "in_view": 0, "in_view_hit": 0, "ids": set(), "first_hit": None}
             for k in prints}
    false_detections = 0
    for frame in truth["frames"]:
        n = frame["frame"]
        dets = detections.get(n, [])
        photos = frame["photos"]
        pairs = sorted(((metrics.jaccard(p["corners"], p["size"], d["corners"]), ti, di)
                        for ti, p in enumerate(photos) for di, d in enumerate(dets)), reverse=True)
        used_t, used_d, matched = set(), set(), {}
        for ji, ti, di in pairs:
            if ti in used_t or di in used_d:
                continue
            used_t.add(ti)
            used_d.add(di)
            if ji >= 0.9:
                matched[ti] = dets[di]["id"]
        for di in range(len(dets)):
            if all(ji < 0.5 for ji, _, d in pairs if d == di):
                false_detections += 1
        for ti, p in enumerate(photos):
            s = stats[p["print"]]
            rest = p["in_frame"] and not p["moving"]
            hit = ti in matched
            s["rest"] += rest
            s["rest_hit"] += rest and hit
            s["in_view"] += p["in_frame"]
            s["in_view_hit"] += p["in_frame"] and hit
            if hit:
                s["ids"].add(matched[ti])
                if s["first_hit"] is None:
                    s["first_hit"] = n
    report = {"prints": [], "false_detections": false_detections}
    for k, s in stats.items():
        report["prints"].append({
            "print": k, "photo": prints[k]["photo"], "role": prints[k]["role"],
            "rest_coverage": s["rest_hit"] / s["rest"] if s["rest"] else 0.0, "rest_frames": s["rest"],
            "in_view_coverage": s["in_view_hit"] / s["in_view"] if s["in_view"] else 0.0,
            "in_view_frames": s["in_view"], "track_ids": sorted(s["ids"]),
            "first_rest_frame": prints[k]["rest_frames"][0], "first_match_frame": s["first_hit"]})
    rest = sum(s["rest"] for s in stats.values())
    report["rest_coverage"] = sum(s["rest_hit"] for s in stats.values()) / rest if rest else 0.0
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--truth", required=True)
    parser.add_argument("--detections", help="saved `colorcam detect --json` output")
    parser.add_argument("--colorcam", default=os.path.join(ROOT, ".build", "release", "colorcam"))
    parser.add_argument("--scene", help="the scene .y4m (when --detections is not given)")
    parser.add_argument("--min-coverage", type=float)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.detections and not args.scene:
        parser.error("give --detections or --scene")
    report = evaluate(json.load(open(args.truth)), load_detections(args))
    if args.json:
        print(json.dumps(report))
    else:
        for p in report["prints"]:
            print(f"print {p['print']} {p['photo']:16s} {p['role']:8s} rest coverage {p['rest_coverage']:6.1%} "
                  f"({p['rest_frames']} frames), in view {p['in_view_coverage']:6.1%} ({p['in_view_frames']}), "
                  f"track ids {p['track_ids']}, first match frame {p['first_match_frame']} "
                  f"(still from {p['first_rest_frame']})")
        print(f"overall rest-frame coverage {report['rest_coverage']:.1%}, "
              f"false detections {report['false_detections']}")
    if args.min_coverage is not None and report["rest_coverage"] < args.min_coverage:
        sys.stderr.write(f"coverage: {report['rest_coverage']:.1%} < {args.min_coverage:.1%}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
