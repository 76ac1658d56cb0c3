#!/usr/bin/env python3
"""Colour on moving prints: on domain-randomized clips in which a hand slides one print (2–15 px per frame, often
partly out of view), how often colour is painted on a visible print with an outline that fits it.

  detect_motion.py [--split heldout] [--seeds 1-24] [--colorcam BIN] [--config NAME=ARGS …] [--json] [--sheet OUT.png]

Clips: tools/scenes/dr_render.py sequence (one per seed, rendered once into .build/dr-motion/SPLIT-SEED). Each clip
goes through `colorcam detect CLIP --json` (tracked, the product's detector and tracker); a detection's `painted`
field is the product's own decision (`PaintGate`, the rule `replay`/`live` composite with). Per frame and per print
whose shown fraction is at least --min-visible (default 0.05): the part of the print the frame shows, in view (the
truth's `visible`) and not under a print drawn above it (the truth lists prints bottom to top; the slid print may
pass under another):
  - painted: a painted detection's outline lies within --max-offset px (default 1.5) of the print's true corners
    (mean corner distance, best cyclic corner order; corners out of view included — the compositor clips);
  - off: a painted detection is nearest this print but further than --max-offset (colour misplaced by that much).
Reported overall, for the slid print while moving (by speed) and at rest, for the other prints, for prints
partly out of view and for prints partly under another. "on the table" counts the painted outlines with under half
their area on a print the frame shows (colour on the table: a track left behind by a print that slid away, which
is nobody's "off" once it is 40 px from every print). --min-painted / --max-off (all prints) and
--min-moving-painted (the slid print while it moves) make it exit 1 (first config) when missed.

--causes adds, per bucket, where the frames that are not painted within --max-offset went, judged on every outline
the tracker reports (painted or not): an outline within --max-offset that the paint gate did not paint; a painted
outline 1.5-40 px off; an unpainted outline 1.5-40 px off; no outline within 40 px (the print is not tracked).
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
sys.path.insert(0, os.path.join(ROOT, "tools", "demo"))
import dr_render  # noqa: E402
from y4m import Y4MReader  # noqa: E402


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            seeds.extend(range(int(a), int(b) + 1))
        else:
            seeds.append(int(part))
    return seeds


def render(split, seed):
    out = os.path.join(ROOT, ".build", "dr-motion", f"{split}-{seed}")
    if not os.path.exists(os.path.join(out, "truth.json")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "scenes", "dr_render.py"), "sequence",
                        "--split", split, "--seed", str(seed), "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "truth.json")) as handle:
        return out, json.load(handle)


def distance(truth, corners):
    """Mean corner distance under the best cyclic order (either direction)."""
    t, c = np.asarray(truth, float), np.asarray(corners, float)
    best = np.inf
    for cc in (c, c[::-1]):
        for s in range(4):
            best = min(best, float(np.linalg.norm(t - np.roll(cc, -s, axis=0), axis=1).mean()))
    return best


def shown_fractions(photos, width, height):
    """Per print (bottom to top), the fraction of its area the frame shows: inside the frame and not under a print
    above it (rasterised at 1 px; corners in pixels, pixel centres at +0.5)."""
    masks = [dr_render.quad_mask(p["corners"], width, height) for p in photos]
    fractions = []
    for i, p in enumerate(photos):
        area = abs(float(cv2.contourArea(np.asarray(p["corners"], np.float32))))
        shown = masks[i].copy()
        for above in masks[i + 1:]:
            shown &= 1 - above
        fractions.append(min(1.0, float(shown.sum()) / max(area, 1e-9)))
    return fractions


CAUSES = ["painted ok", "outline ok, unpainted", "painted off", "unpainted off", "no outline"]


def score_clip(truth, lines, min_visible, max_offset):
    """Rows (bucket keys, painted ok, painted off, (frame, print index, distance), cause: one of CAUSES) per (frame,
    print)."""
    rows = []
    for frame, line in zip(truth["frames"], lines):
        if any("painted" not in d for d in line["detections"]):
            raise SystemExit("detect_motion: colorcam detect --json gives no `painted` field (an older binary?)")
        shown = shown_fractions(frame["photos"], truth["width"], truth["height"])
        for p, shown_fraction in zip(frame["photos"], shown):
            if shown_fraction < min_visible:
                continue
            dists = [(distance(p["corners"], d["corners"]), d["painted"]) for d in line["detections"]]
            nearest = min((dist for dist, painted in dists if painted), default=np.inf)
            any_nearest = min((dist for dist, _ in dists), default=np.inf)
            cause = CAUSES[0] if nearest <= max_offset else CAUSES[1] if any_nearest <= max_offset \
                else CAUSES[2] if nearest < 40 else CAUSES[3] if any_nearest < 40 else CAUSES[4]
            keys = ["all"]
            if p["mover"]:
                keys.append("slid, moving" if p["speed_px"] > 0 else "slid, at rest")
                if p["speed_px"] > 0:
                    v = p["speed_px"]
                    keys.append("moving 2-5 px/f" if v < 5 else "moving 5-10 px/f" if v < 10 else "moving 10-15 px/f")
            else:
                keys.append("other prints")
            if p["visible"] < 0.999:
                keys.append("partly out of view")
            if shown_fraction < p["visible"] - 0.01:
                keys.append("partly under another")
            rows.append((keys, nearest <= max_offset, max_offset < nearest < 40,
                         (frame["frame"], frame["photos"].index(p), nearest), cause))
    return rows


def stray_paint(truth, lines, min_on_print=0.5):
    """(painted outlines, those with under `min_on_print` of their area on a print the frame shows): colour
    painted on the table. The buckets above cannot see it — a painted outline 40 px or more from every print is
    nobody's "off"."""
    width, height = truth["width"], truth["height"]
    painted = stray = 0
    for frame, line in zip(truth["frames"], lines):
        outlines = [d["corners"] for d in line["detections"] if d.get("painted")]
        if not outlines:
            continue
        prints = np.zeros((height, width), np.uint8)
        for p in frame["photos"]:
            prints |= dr_render.quad_mask(p["corners"], width, height)
        for corners in outlines:
            mask = dr_render.quad_mask(corners, width, height)
            area = float(mask.sum())
            painted += 1
            if area > 0 and float((mask & prints).sum()) < min_on_print * area:
                stray += 1
    return painted, stray


def luma_frame(path, index):
    """Frame `index`'s Y plane of a .y4m clip (uint8 [height, width])."""
    with Y4MReader(path) as reader:
        for k, (y, _, _) in enumerate(reader):
            if k == index:
                return y
    raise SystemExit(f"detect_motion: {path}: no frame {index}")


def write_sheet(path, worst, tile=(240, 180), columns=4):
    """A contact sheet of the worst (clip, print) pairs, worst first: for each, the frame in the middle of its failed
    frames, cropped around the print: the truth in green, painted outlines in red, caption seed / frame / offset."""
    tiles = []
    for clip_dir, truth, lines, (frame_index, print_index, nearest), share in worst:
        luma = luma_frame(os.path.join(clip_dir, "sequence.y4m"), frame_index)
        image = cv2.cvtColor(luma, cv2.COLOR_GRAY2BGR)
        corners = np.asarray(truth["frames"][frame_index]["photos"][print_index]["corners"], float)
        for d in lines[frame_index]["detections"]:
            if d.get("painted"):
                cv2.polylines(image, [np.round(np.asarray(d["corners"]) * 4).astype(np.int32)], True, (0, 0, 255), 1,
                              cv2.LINE_AA, shift=2)
        cv2.polylines(image, [np.round(corners * 4).astype(np.int32)], True, (0, 255, 0), 1, cv2.LINE_AA, shift=2)
        x0, y0 = np.maximum(corners.min(0) - 25, 0).astype(int)
        x1, y1 = np.minimum(corners.max(0) + 25, [truth["width"], truth["height"]]).astype(int)
        crop = image[y0:max(y1, y0 + 2), x0:max(x1, x0 + 2)]
        scale = min(tile[0] / crop.shape[1], tile[1] / crop.shape[0])
        crop = cv2.resize(crop, (max(1, int(crop.shape[1] * scale)), max(1, int(crop.shape[0] * scale))),
                          interpolation=cv2.INTER_NEAREST)
        cell = np.full((tile[1] + 18, tile[0], 3), 255, np.uint8)
        cell[:crop.shape[0], :crop.shape[1]] = crop
        off = "not painted" if not np.isfinite(nearest) or nearest >= 40 else f"{nearest:.1f} px"
        cv2.putText(cell, f"seed {truth['seed']} f{frame_index} p{print_index}: {off}, {100 * share:.0f}% ok",
                    (2, tile[1] + 13), cv2.FONT_HERSHEY_SIMPLEX, 0.38, (0, 0, 0), 1, cv2.LINE_AA)
        tiles.append(cell)
    while len(tiles) % columns:
        tiles.append(np.full_like(tiles[0], 255))
    rows = [np.hstack(tiles[k:k + columns]) for k in range(0, len(tiles), columns)]
    cv2.imwrite(path, np.vstack(rows))


def run_config(binary, extra, clip_dir):
    cmd = [binary, "detect", os.path.join(clip_dir, "sequence.y4m"), "--json"] + extra
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"detect_motion: {' '.join(cmd)} exited {result.returncode}: {result.stderr.strip()}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["train", "heldout"], default="heldout",
                        help="train: training-split clips (the only ones a setting may be chosen on)")
    parser.add_argument("--seeds", default="1-24")
    parser.add_argument("--colorcam", default=os.path.join(ROOT, ".build", "release", "colorcam"))
    parser.add_argument("--config", action="append", default=[], help="NAME=extra colorcam detect arguments")
    parser.add_argument("--min-visible", type=float, default=0.05)
    parser.add_argument("--max-offset", type=float, default=1.5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sheet", help="write a contact sheet (PNG) of the 16 worst (clip, print) pairs, first config")
    parser.add_argument("--min-painted", type=float)
    parser.add_argument("--max-off", type=float)
    parser.add_argument("--min-moving-painted", type=float)
    parser.add_argument("--causes", action="store_true",
                        help="per bucket, the share of frames by cause (painted ok, unpainted, off, not tracked)")
    args = parser.parse_args()
    if not os.access(args.colorcam, os.X_OK):
        raise SystemExit(f"detect_motion: {args.colorcam}: not an executable (make release)")
    configs = [(c.split("=", 1)[0], c.split("=", 1)[1].split() if "=" in c else []) for c in args.config] \
        or [("default", [])]
    seeds = parse_seeds(args.seeds)
    with ThreadPoolExecutor(args.workers) as pool:
        clips = list(pool.map(lambda s: render(args.split, s), seeds))
    report = {}
    for name, extra in configs:
        with ThreadPoolExecutor(args.workers) as pool:
            outputs = list(pool.map(lambda c: run_config(args.colorcam, extra, c[0]), clips))
        table, causes = {}, {}
        per_clip = []
        pairs = []
        painted_outlines = stray_outlines = 0
        for (clip_dir, truth), lines in zip(clips, outputs):
            rows = score_clip(truth, lines, args.min_visible, args.max_offset)
            painted, stray = stray_paint(truth, lines)
            painted_outlines += painted
            stray_outlines += stray
            mover = [ok for keys, ok, _, _, _ in rows if "slid, moving" in keys]
            per_clip.append((truth["seed"], truth["speed_px_per_frame"], np.mean(mover) if mover else float("nan")))
            by_print = {}
            for _, ok, _, where, _ in rows:
                by_print.setdefault(where[1], []).append((ok, where))
            for items in by_print.values():
                failed = [where for ok, where in items if not ok]
                if failed:
                    share = sum(ok for ok, _ in items) / len(items)
                    pairs.append((clip_dir, truth, lines, failed[len(failed) // 2], share))
            for keys, ok, off, _, cause in rows:
                for k in keys:
                    n, good, bad = table.get(k, (0, 0, 0))
                    table[k] = (n + 1, good + ok, bad + off)
                    causes.setdefault(k, dict.fromkeys(CAUSES, 0))[cause] += 1
        if args.sheet and name == configs[0][0]:
            write_sheet(args.sheet, sorted(pairs, key=lambda pair: pair[4])[:16])
        report[name] = {"buckets": {k: {"frames": n, "painted": good / n, "off": bad / n,
                                        "causes": {c: causes[k][c] / n for c in CAUSES}}
                                    for k, (n, good, bad) in table.items()},
                        "clips": [{"seed": s, "speed_px": v, "moving_painted": m} for s, v, m in per_clip],
                        "painted_outlines": painted_outlines, "on_the_table": stray_outlines}
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        order = ["all", "other prints", "slid, at rest", "slid, moving", "moving 2-5 px/f", "moving 5-10 px/f",
                 "moving 10-15 px/f", "partly out of view", "partly under another"]
        print(f"{len(clips)} clips ({args.split}, seeds {args.seeds}); painted within {args.max_offset} px "
              f"(off: painted nearest the print but further)")
        print(f"{'bucket':22s}" + "".join(f"{n:>24s}" for n, _ in configs))
        for k in order:
            cells = []
            for name, _ in configs:
                b = report[name]["buckets"].get(k)
                cells.append(f"{100 * b['painted']:6.1f}% off {100 * b['off']:4.1f}% n={b['frames']:<5d}" if b else "-")
            print(f"{k:22s}" + "".join(f"{c:>24s}" for c in cells))
        print(f"{'on the table':22s}" + "".join(
            f"{report[n]['on_the_table']:>9d} of {report[n]['painted_outlines']:<6d}       " for n, _ in configs)
            + "  (painted outlines with under half their area on a print)")
        worst = sorted(report[configs[0][0]]["clips"], key=lambda c: (np.nan_to_num(c["moving_painted"], nan=2)))
        print("worst clips (" + configs[0][0] + ", moving): " + ", ".join(
            f"seed {c['seed']} {c['speed_px']:.1f} px/f {100 * c['moving_painted']:.0f}%" for c in worst[:6]))
        if args.causes:
            for name, _ in configs:
                print(f"causes ({name}; off: 1.5-40 px from the print)")
                print(f"{'bucket':22s}" + "".join(f"{c:>24s}" for c in CAUSES) + f"{'frames':>8s}")
                for k in order:
                    b = report[name]["buckets"].get(k)
                    if b:
                        print(f"{k:22s}" + "".join(f"{100 * b['causes'][c]:23.1f}%" for c in CAUSES)
                              + f"{b['frames']:8d}")
    first = report[configs[0][0]]["buckets"]["all"]
    if args.min_painted is not None and first["painted"] < args.min_painted:
        return 1
    if args.max_off is not None and first["off"] > args.max_off:
        return 1
    moving = report[configs[0][0]]["buckets"].get("slid, moving")
    if args.min_moving_painted is not None and (moving is None or moving["painted"] < args.min_moving_painted):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
