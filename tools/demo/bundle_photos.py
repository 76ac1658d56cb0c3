#!/usr/bin/env python3
"""Writes the demo's bundled colour originals (Assets/demo-photos/*.png) from the training pipeline's Lab cache.

    python3 tools/demo/bundle_photos.py --work /work/data/color [--out Assets/demo-photos] [--long-side 360]

Run once by a maintainer (a fresh clone has no /work/data; the PNGs are committed). The photos are three of the
held-out "demo" photos of tools/train/split.json, none used in training; Assets/demo-photos/README.md records
their origin and licence. The cache holds each photo as CIE Lab (float, long side 512); it is converted to sRGB
with tools/train/labcolor.py (the training pipeline's definition) and downscaled with area averaging.
"""
import argparse
import json
import os
import sys

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
from labcolor import lab2rgb  # noqa: E402

# Output name → split.json id. The scene (tools/demo/scene.py) prints every PNG in the folder.
BUNDLE = {"schwerin-palace": "p0190", "green-maple": "p0003", "fallen-leaf": "p0280"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="/work/data/color")
    parser.add_argument("--out", default=os.path.join(ROOT, "Assets", "demo-photos"))
    parser.add_argument("--long-side", type=int, default=360)
    args = parser.parse_args()
    cache_path = os.path.join(args.work, "cache.npz")
    if not os.path.exists(cache_path):
        sys.exit(f"bundle_photos: {cache_path}: no such file (the colour training cache; see tools/train/README.md)")
    demo = {d["id"]: d["file"] for d in json.load(open(os.path.join(ROOT, "tools", "train", "split.json")))["demo"]}
    cache = np.load(cache_path)
    os.makedirs(args.out, exist_ok=True)
    for name, photo_id in BUNDLE.items():
        if photo_id not in demo:
            sys.exit(f"bundle_photos: {photo_id} is not in split.json's demo set")
        rgb = (lab2rgb(cache[photo_id].astype(np.float64)) * 255).round().astype(np.uint8)
        image = Image.fromarray(rgb)
        scale = args.long_side / max(image.size)
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.BOX)
        path = os.path.join(args.out, name + ".png")
        image.save(path, optimize=True)
        print(f"{path}: {image.width}x{image.height}, {os.path.getsize(path)} bytes, {photo_id} {demo[photo_id]}")


if __name__ == "__main__":
    main()
