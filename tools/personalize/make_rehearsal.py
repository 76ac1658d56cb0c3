#!/usr/bin/env python3
"""Writes the general photos `colorcam personalize` rehearses (Models/colorcam-default/rehearsal/).

    python3 tools/personalize/make_rehearsal.py [--work /work/data/color] [--count 64] [--out Models/colorcam-default/rehearsal]

While personalize learns a user's photos, it keeps showing the model general photos with the base model's own
colours as the target, and keeps a quarter of them aside to refuse weights that colour everything else worse
(`Sources/Infer/Personalize/Personalizer.swift`). Those photos must be general (many subjects), must not be the
general held-out photos the issue's figures are measured on, and must be small: they ship with the bundle.

So they are drawn from the default model's *training* split only (tools/train/split.json "train", cached in
WORK/cache.npz by tools/train/build_dataset.py): a seeded sample, a quarter from the wallpaper packages and the rest
from gcompris (its share of the split), colour pictures only (≥ 10 % of pixels with chroma > 5), each resized so its short side is at most 256 px (the model's input) and
written as JPEG quality 90, with sources.csv (id, package, file, licence) beside them. Deterministic for a seed.
"""
import argparse
import csv
import json
import os
import random
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
from labcolor import lab2rgb  # noqa: E402

SEED = 20261205


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--count", type=int, default=64)
    ap.add_argument("--out", default=os.path.join(ROOT, "Models", "colorcam-default", "rehearsal"))
    args = ap.parse_args()
    split = json.load(open(os.path.join(ROOT, "tools", "train", "split.json")))
    sources = {r["id"]: r for r in csv.DictReader(open(os.path.join(ROOT, "tools", "train", "sources.csv")))}
    cache_path = os.path.join(args.work, "cache.npz")
    if not os.path.exists(cache_path):
        raise SystemExit(f"{cache_path}: missing (run tools/train/collect.py and build_dataset.py)")
    cache = np.load(cache_path)

    def coloured(pid):  # personalize refuses near-grey pictures (UserPhoto.minColouredShare 3 %); keep a margin
        lab = cache[pid].astype(np.float32)
        return float(np.mean(np.hypot(lab[..., 1], lab[..., 2]) > 5)) >= 0.10

    train = sorted(i for i in split["train"] if coloured(i))
    gcompris = [i for i in train if sources[i]["package"] == "gcompris-qt-data"]
    others = [i for i in train if sources[i]["package"] != "gcompris-qt-data"]
    rng = random.Random(SEED)
    k_other = min(len(others), args.count // 4)
    chosen = sorted(rng.sample(others, k_other) + rng.sample(gcompris, args.count - k_other))
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        os.remove(os.path.join(args.out, f))
    with open(os.path.join(args.out, "sources.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["file", "id", "package", "source_file", "licence"])
        for pid in chosen:
            rgb = np.round(lab2rgb(cache[pid].astype(np.float64)) * 255).astype(np.uint8)
            im = Image.fromarray(rgb)
            short = min(im.size)
            if short > 256:
                im = im.resize((round(im.size[0] * 256 / short), round(im.size[1] * 256 / short)), Image.LANCZOS)
            name = f"{pid}.jpg"
            im.save(os.path.join(args.out, name), quality=90)
            s = sources[pid]
            w.writerow([name, pid, s["package"], s["file"], s["licence"]])
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print(f"wrote {len(chosen)} photos ({k_other} wallpapers, {len(chosen) - k_other} gcompris) to {args.out}, "
          f"{total / 1024:.0f} KB")


if __name__ == "__main__":
    main()
