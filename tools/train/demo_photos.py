"""Writes the held-out demo photos (split.json "demo") as colour PNGs and their greyscale versions.

    python3 tools/train/demo_photos.py --work /work/data/color --out demo/photos

For the end-to-end demo: the greyscale files are what a camera would see printed; none was used in training.
"""
import argparse
import json
import os

import numpy as np
from PIL import Image

from labcolor import lab2rgb

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--out", default="demo/photos")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cache = np.load(os.path.join(args.work, "cache.npz"))
    for d in json.load(open(os.path.join(HERE, "split.json")))["demo"]:
        rgb = (lab2rgb(cache[d["id"]].astype(np.float64)) * 255).round().astype(np.uint8)
        Image.fromarray(rgb).save(os.path.join(args.out, f"{d['id']}_colour.png"))
        Image.fromarray(rgb).convert("L").save(os.path.join(args.out, f"{d['id']}_grey.png"))
        print(d["id"], d["file"])


if __name__ == "__main__":
    main()
