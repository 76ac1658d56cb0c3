#!/usr/bin/env python3
"""How much colour hints buy: the colour issue's held-out photos colorized by `colorcam colorize --whole` with 0, 1,
3, 5 and 10 hints whose colours are taken from the originals (issue #28's quality curve).

    python3 tools/train/hint_eval.py [--split heldout|train] [--work /work/data/color] [--count 45]
        [--counts 0,1,3,5,10] [--seed 28]
        [--colorcam .build/release/colorcam] [--model Models/colorcam-default] [--out DIR] [--json OUT.json]
        [--sheet OUT.png]

Hints are drawn as a user might click (and as training simulated them, Zhang, Zhu et al. 2017): centre-biased
points (normal around the centre, sd a quarter of each side), each hint's colour the original's mean sRGB over the
5x5 pixels at that point; the k hints of a photo are the first k of one fixed draw, so the curve adds hints. Each
photo's L goes in as a grey PNG (the clean-print path of tools/train/pipeline_eval.py: the live path for hints is
not built yet). Metrics as pipeline_eval.py: ab L1 and hue agreement (pooled), per hint count, with grey and sepia
on the same pixels. --sheet: per photo (worst hue gain first) the L, 0, 5 and 10 hints with their points, original.
"""
import argparse
import json
import os
import subprocess
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from colour_metrics import SEPIA_AB, hue_counts  # noqa: E402
from labcolor import lab2rgb, rgb2lab  # noqa: E402


def draw_points(rng, h, w, n):
    ys = np.clip(rng.normal(h / 2, h / 4, n), 2, h - 3).astype(int)
    xs = np.clip(rng.normal(w / 2, w / 4, n), 2, w - 3).astype(int)
    return list(zip(xs.tolist(), ys.tolist()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["heldout", "train"], default="heldout",
                    help="held-out photos (the figures), or training photos (for choices such as the hint size)")
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--count", type=int, default=45)
    ap.add_argument("--counts", default="0,1,3,5,10")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--colorcam", default=os.path.join(ROOT, ".build", "release", "colorcam"))
    ap.add_argument("--model", default=os.path.join(ROOT, "Models", "colorcam-default"))
    ap.add_argument("--out", default=os.path.join(ROOT, ".build", "hint-eval"))
    ap.add_argument("--json")
    ap.add_argument("--sheet")
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    split = json.load(open(os.path.join(HERE, "split.json")))
    cache = np.load(os.path.join(args.work, "cache.npz"))
    os.makedirs(args.out, exist_ok=True)
    totals = {k: {"ok": 0, "n": 0, "l1": []} for k in counts}
    base = {"grey_l1": [], "sepia_l1": [], "sepia_ok": 0}
    tiles = []
    photos = split[args.split]
    if args.split == "train":  # a spread of training photos, as pipeline_eval.py
        photos = [photos[k] for k in np.random.default_rng(args.seed).permutation(len(photos))]
    photos = photos[:args.count]
    if not photos:
        raise SystemExit(f"hint_eval: no {args.split} photos in split.json")
    for i, pid in enumerate(photos):
        rgb = np.round(lab2rgb(cache[pid].astype(np.float64)) * 255).astype(np.uint8)
        h, w = rgb.shape[:2]
        lab_t = rgb2lab(rgb / 255.0)
        grey = np.round(lab2rgb(np.concatenate([lab_t[..., :1], np.zeros((h, w, 2))], -1)) * 255).astype(np.uint8)
        src = os.path.join(args.out, f"{pid}-in.png")
        cv2.imwrite(src, grey[..., ::-1])
        rng = np.random.default_rng(args.seed * 1000 + i)
        points = draw_points(rng, h, w, max(counts))
        outs = {}
        for k in counts:
            hint_args = []
            for x, y in points[:k]:
                c = rgb[y - 2:y + 3, x - 2:x + 3].reshape(-1, 3).mean(0).round().astype(int)
                hint_args += ["--hint", f"{x},{y},#{c[0]:02x}{c[1]:02x}{c[2]:02x}"]
            dst = os.path.join(args.out, f"{pid}-{k}.png")
            run = subprocess.run([args.colorcam, "colorize", src, dst, "--whole", "--model", args.model] + hint_args,
                                 capture_output=True, text=True)
            if run.returncode != 0:
                raise SystemExit(f"{pid}: colorcam colorize failed ({run.returncode}): {run.stderr.strip()}")
            out = cv2.imread(dst)[..., ::-1]
            outs[k] = out
            ab_p = rgb2lab(out / 255.0)[..., 1:].reshape(-1, 2)
            ok, n = hue_counts(ab_p, lab_t[..., 1:].reshape(-1, 2))
            totals[k]["ok"] += ok
            totals[k]["n"] += n
            totals[k]["l1"].append(float(np.abs(ab_p - lab_t[..., 1:].reshape(-1, 2)).mean()))
        ab_t = lab_t[..., 1:].reshape(-1, 2)
        base["grey_l1"].append(float(np.abs(ab_t).mean()))
        base["sepia_l1"].append(float(np.abs(SEPIA_AB - ab_t).mean()))
        base["sepia_ok"] += hue_counts(np.broadcast_to(SEPIA_AB, ab_t.shape), ab_t)[0]
        if args.sheet:
            def hue_of(img):
                ok, n = hue_counts(rgb2lab(img / 255.0)[..., 1:].reshape(-1, 2), ab_t)
                return ok / max(1, n)
            gain = hue_of(outs[max(counts)]) - hue_of(outs[0])
            tiles.append((gain, pid, grey, [outs[k] for k in counts if k in (0, 5, 10)], rgb, points))
        print(f"{i + 1}/{len(photos)} {pid}", file=sys.stderr)
    n_hue = totals[counts[0]]["n"]
    rows = {k: {"hints": k, "hue_agreement": totals[k]["ok"] / max(1, totals[k]["n"]),
                "ab_l1": float(np.mean(totals[k]["l1"]))} for k in counts}
    result = {"photos": len(photos), "model": args.model, "counts": counts, "rows": rows,
              "grey_ab_l1": float(np.mean(base["grey_l1"])), "sepia_ab_l1": float(np.mean(base["sepia_l1"])),
              "sepia_hue_agreement": base["sepia_ok"] / max(1, n_hue),
              "split": args.split, "path": "clean photos' L (colorize --whole), hint colours from the originals"}
    print(f"{len(photos)} {args.split} photos, clean L, `colorcam colorize --whole --hint …`")
    print("| hints | hue agreement | ab L1 |")
    print("|---|---|---|")
    for k in counts:
        print(f"| {k} | {100 * rows[k]['hue_agreement']:.1f} % | {rows[k]['ab_l1']:.2f} |")
    print(f"| grey / sepia | 0 / {100 * result['sepia_hue_agreement']:.1f} % | {result['grey_ab_l1']:.2f} / "
          f"{result['sepia_ab_l1']:.2f} |")
    if 0 in rows and 5 in rows:
        print(f"5 hints vs 0: hue agreement {100 * (rows[5]['hue_agreement'] - rows[0]['hue_agreement']):+.1f} points")
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)
    if args.sheet:
        tiles.sort(key=lambda t: t[0])
        size = 160
        sheet_rows = []
        for gain, pid, grey, outs, rgb, points in tiles[:16]:
            cells = []
            for j, img in enumerate([grey] + outs + [rgb]):
                cell = cv2.resize(np.ascontiguousarray(img[..., ::-1]), (size, size), interpolation=cv2.INTER_AREA)
                shown = {1: 0, 2: 5, 3: 10}.get(j, 0)
                sy, sx = size / img.shape[0], size / img.shape[1]
                for x, y in points[:shown]:
                    cv2.circle(cell, (int(x * sx), int(y * sy)), 4, (255, 255, 255), 1)
                cells.append(cell)
            row = np.concatenate(cells, 1)
            cv2.putText(row, f"{pid} {100 * gain:+.0f}", (4, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1)
            sheet_rows.append(row)
        cv2.imwrite(args.sheet, np.concatenate(sheet_rows, 0))


if __name__ == "__main__":
    main()
