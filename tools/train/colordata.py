"""The training data, from the Lab cache (build_dataset.py) or from a compact pack of the training photos.

    python3 tools/train/colordata.py --work /work/data/color --pack .gpu/color [--quality 95]

writes the pack: the TRAINING photos only (split.json "train"; never the held-out ones) as JPEG (4:4:4) of the very
RGB that build_dataset.py cached (longer side <= 512 px), the tuxpaint cut-outs as RGBA PNG (longer side <= 160 px,
the same selection as stamps.npz), and index.json. train.py reads either source with

    cache, stamps = load_data(work=..., pack=...)

cache: photo id -> Lab float16 (H, W, 3), as cache.npz holds it (from the pack: re-converted from the JPEG);
stamps: list of (4, h, w) float32 tensors (Lab + alpha x 100), as stamps.npz holds them.
"""
import argparse
import csv
import glob
import json
import os

import numpy as np
from PIL import Image

from labcolor import rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))


def stamp_images(work):
    """The tuxpaint cut-outs build_dataset.py keeps, in its order: RGBA PIL images, longer side <= 160 px."""
    out = []
    for f in sorted(glob.glob(os.path.join(work, "raw", "tuxpaint-stamps-default", "*.png"))):
        if "_mirror" in f or "_thumb" in f:
            continue
        im = Image.open(f)
        if im.mode != "RGBA" or min(im.size) < 100:
            continue
        im.thumbnail((160, 160), Image.LANCZOS)
        a = np.asarray(im).astype(np.float64) / 255.0
        if a[..., 3].mean() < 0.15:
            continue
        out.append(im)
    return out


def stamp_lab(rgba_u8):
    a = rgba_u8.astype(np.float64) / 255.0
    return np.concatenate([rgb2lab(a[..., :3]), a[..., 3:4] * 100], -1).astype(np.float16)


def make_pack(work, pack, quality=95):
    from build_dataset import load_rgb
    split = json.load(open(os.path.join(HERE, "split.json")))
    train = set(split["train"])
    rows = {r["id"]: r for r in csv.DictReader(open(os.path.join(HERE, "sources.csv")))}
    os.makedirs(os.path.join(pack, "photos"), exist_ok=True)
    os.makedirs(os.path.join(pack, "stamps"), exist_ok=True)
    photos = []
    for pid in sorted(train):
        r = rows[pid]
        assert r["split"] == "train", pid
        rgb = load_rgb(os.path.join(work, "raw", r["package"], r["file"]))
        assert (rgb.shape[1], rgb.shape[0]) == (int(r["width"]), int(r["height"])), pid
        Image.fromarray(rgb).save(os.path.join(pack, "photos", pid + ".jpg"), quality=quality, subsampling=0)
        photos.append(pid)
    stamps = []
    for k, im in enumerate(stamp_images(work)):
        name = f"s{k:04d}.png"
        im.save(os.path.join(pack, "stamps", name), optimize=True)
        stamps.append(name)
    json.dump({"photos": photos, "stamps": stamps, "quality": quality,
               "note": "training photos only (tools/train/split.json train); see tools/train/colordata.py"},
              open(os.path.join(pack, "index.json"), "w"), indent=0)
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(pack, "**", "*"), recursive=True)
               if os.path.isfile(f))
    print(f"pack {pack}: {len(photos)} training photos, {len(stamps)} stamps, {size / 2 ** 20:.1f} MiB")


def load_data(work=None, pack=None):
    import torch
    if pack:
        index = json.load(open(os.path.join(pack, "index.json")))
        cache = {}
        for pid in index["photos"]:
            rgb = np.asarray(Image.open(os.path.join(pack, "photos", pid + ".jpg")).convert("RGB"))
            cache[pid] = rgb2lab(rgb / 255.0).astype(np.float16)
        stamps = [np.asarray(Image.open(os.path.join(pack, "stamps", n)).convert("RGBA")) for n in index["stamps"]]
        stamps = [torch.from_numpy(stamp_lab(s).astype(np.float32)).permute(2, 0, 1) for s in stamps]
        return cache, stamps
    cache = np.load(os.path.join(work, "cache.npz"))
    st = np.load(os.path.join(work, "stamps.npz"))
    stamps = [torch.from_numpy(st[k].astype(np.float32)).permute(2, 0, 1) for k in st.files]
    return cache, stamps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--pack", required=True)
    ap.add_argument("--quality", type=int, default=95)
    ap.add_argument("--check", action="store_true", help="compare the pack with WORK's cache.npz / stamps.npz")
    args = ap.parse_args()
    if not args.check:
        make_pack(args.work, args.pack, args.quality)
    c1, s1 = load_data(pack=args.pack)
    c0, s0 = load_data(work=args.work)
    d = [float(np.abs(c1[k].astype(np.float32) - c0[k].astype(np.float32)).mean(axis=(0, 1)).max()) for k in c1]
    ds = max(float((a - b).abs().max()) for a, b in zip(s0, s1))
    print(f"pack vs cache: {len(c1)} photos, mean |Lab| diff per channel worst {max(d):.2f} median "
          f"{float(np.median(d)):.2f}; {len(s1)}/{len(s0)} stamps, max |diff| {ds:.3f}")


if __name__ == "__main__":
    main()
