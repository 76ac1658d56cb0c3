"""Step 2 of the dataset: choose the photographs, split them by photo, and cache them in Lab.

    python3 tools/train/build_dataset.py --work /work/data/color [--sheets]

Reads WORK/raw (collect.py), drops what curate.txt excludes (non-photographs, found by eye on the contact sheets
that --sheets writes to WORK/sheets), keeps one size per Enlightenment wallpaper, and writes:
  tools/train/sources.csv   every photo kept: id, package, file, licence, size, split
  tools/train/split.json    the seeded split by photo (train / heldout) and the 8 demo photos (all held out)
  WORK/cache.npz            each photo resized so its longer side is <= 512 px, as Lab float16
  WORK/stamps.npz           tuxpaint cut-outs (RGBA, longer side <= 160 px) in Lab + alpha
"""
import argparse
import csv
import glob
import json
import os
import random
import re

import numpy as np
from PIL import Image

from labcolor import rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261130
MAX_SIDE = 512
# licence per package, from each package's debian/copyright (per-file details quoted in sources.md)
LICENCES = {
    "lomiri-wallpapers-16.04": "CC-BY-4.0 / CC-BY-SA-4.0 / CC0-1.0 (per file, see debian/copyright)",
    "lomiri-wallpapers-20.04": "CC-BY-SA-3.0",
    "mate-backgrounds": "GPL-2+",
    "plasma-workspace-wallpapers": "GPL-2+ (per wallpaper metadata)",
    "palapeli-data": "GPL-2+",
    "enlightenment-data": "BSD-2-clause",
    "gcompris-qt-data": "GPL-3+ (debian/copyright Files: *; photos credited upstream per activity)",
    "tuxpaint-stamps-default": "GPL-2+",
}


def load_curation():
    """curate.txt: lines 'exclude <package>/<file regex>  # reason'."""
    rules = []
    for line in open(os.path.join(HERE, "curate.txt")):
        line = line.split("#", 1)[0].strip()
        if line.startswith("exclude "):
            rules.append(re.compile(line[len("exclude "):].strip()))
    return rules


def candidates(work):
    out = []
    for pkg in sorted(os.listdir(os.path.join(work, "raw"))):
        if pkg == "tuxpaint-stamps-default":
            continue
        files = sorted(glob.glob(os.path.join(work, "raw", pkg, "*")))
        if pkg == "enlightenment-data":  # one wallpaper, many sizes: keep the largest
            best = {}
            for f in files:
                key = os.path.basename(f).split("__")[0]
                if key not in best or os.path.getsize(f) > os.path.getsize(best[key]):
                    best[key] = f
            files = sorted(best.values())
        out += [(pkg, f) for f in files]
    return out


def load_rgb(path, max_side=MAX_SIDE):
    im = Image.open(path)
    im.draft("RGB", (max_side, max_side))
    im = im.convert("RGB")
    s = max_side / max(im.size)
    if s < 1:
        im = im.resize((max(1, round(im.width * s)), max(1, round(im.height * s))), Image.LANCZOS)
    return np.asarray(im)


def sheets(work, items):
    os.makedirs(os.path.join(work, "sheets"), exist_ok=True)
    per = 48
    for k in range(0, len(items), per):
        sheet = Image.new("RGB", (8 * 160, 6 * 130), "white")
        for i, (pkg, f) in enumerate(items[k:k + per]):
            im = Image.fromarray(load_rgb(f, 150))
            im.thumbnail((150, 110))
            sheet.paste(im, ((i % 8) * 160, (i // 8) * 130))
        sheet.save(os.path.join(work, "sheets", f"sheet{k // per:02d}.png"))
    with open(os.path.join(work, "sheets", "index.txt"), "w") as fh:
        for k, (pkg, f) in enumerate(items):
            fh.write(f"{k // per:02d} {k % per:2d} {pkg}/{os.path.basename(f)}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--sheets", action="store_true")
    ap.add_argument("--heldout-fraction", type=float, default=0.15)
    args = ap.parse_args()
    rules = load_curation()
    items = [(p, f) for p, f in candidates(args.work)
             if not any(r.search(f"{p}/{os.path.basename(f)}") for r in rules)]
    if args.sheets:
        sheets(args.work, items)
        print(f"{len(items)} candidates on sheets in {args.work}/sheets")
        return
    rng = random.Random(SEED)
    by_pkg = {}
    for p, f in items:
        by_pkg.setdefault(p, []).append(f)
    split, demo = {}, []
    for p, files in sorted(by_pkg.items()):
        files = sorted(files)
        rng.shuffle(files)
        n_held = max(1, round(len(files) * args.heldout_fraction))
        for i, f in enumerate(files):
            split[f"{p}/{os.path.basename(f)}"] = "heldout" if i < n_held else "train"
    held_big = sorted(k for k, v in split.items() if v == "heldout" and not k.startswith("gcompris"))
    held_small = sorted(k for k, v in split.items() if v == "heldout" and k.startswith("gcompris"))
    rng.shuffle(held_big)
    rng.shuffle(held_small)
    demo = sorted(held_big[:5] + held_small[:3])
    arrays, rows = {}, []
    for idx, (p, f) in enumerate(sorted(items)):
        key = f"{p}/{os.path.basename(f)}"
        rgb = load_rgb(f)
        if min(rgb.shape[:2]) < 96:
            continue
        arrays[f"p{idx:04d}"] = rgb2lab(rgb / 255.0).astype(np.float16)
        rows.append({"id": f"p{idx:04d}", "package": p, "file": os.path.basename(f), "licence": LICENCES[p],
                     "width": rgb.shape[1], "height": rgb.shape[0], "split": split[key]})
    np.savez(os.path.join(args.work, "cache.npz"), **arrays)
    with open(os.path.join(HERE, "sources.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    ids = {f"{r['package']}/{r['file']}": r["id"] for r in rows}
    json.dump({"seed": SEED, "heldout_fraction": args.heldout_fraction,
               "train": sorted(ids[k] for k, v in split.items() if v == "train" and k in ids),
               "heldout": sorted(ids[k] for k, v in split.items() if v == "heldout" and k in ids),
               "demo": [{"id": ids[k], "file": k} for k in demo if k in ids]},
              open(os.path.join(HERE, "split.json"), "w"), indent=1)
    # tuxpaint cut-outs
    from colordata import stamp_images, stamp_lab  # one selection of cut-outs for the cache and the pack
    stamps = {f"s{i:04d}": stamp_lab(np.asarray(im)) for i, im in enumerate(stamp_images(args.work))}
    np.savez(os.path.join(args.work, "stamps.npz"), **stamps)
    counts = {}
    for r in rows:
        counts.setdefault(r["package"], [0, 0])[0 if r["split"] == "train" else 1] += 1
    for p, (t, h) in sorted(counts.items()):
        print(f"{p}: {t} train, {h} held out")
    print(f"stamps: {len(stamps)}")


if __name__ == "__main__":
    main()
