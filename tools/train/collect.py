"""Step 1 of the dataset: unpack the Debian packages and gather candidate photographs.

    python3 tools/train/collect.py --work /work/data/color

Fetches and unpacks (never installs) the packages in SOURCES into WORK/x/deb-PACKAGE (tools/scenes/debcache.py: a
failed or truncated download leaves nothing behind; run `apt-get update` once first), and copies every candidate
image into WORK/raw/<package>/<flattened path>. Enlightenment backgrounds are unpacked from .edj with edje_decc
(package libedje-bin); gcompris images come out of Qt .rcc files (rcc_extract.py). Which candidates are photographs is decided afterwards, by eye, in curate.txt (build_dataset.py).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenes"))
import debcache  # noqa: E402
from rcc_extract import read_rcc  # noqa: E402

# package -> glob patterns (relative to the unpacked root) of candidate images
SOURCES = {
    "lomiri-wallpapers-16.04": ["usr/share/backgrounds/*.jpg"],
    "lomiri-wallpapers-20.04": ["usr/share/backgrounds/*.jpg"],
    "mate-backgrounds": ["usr/share/backgrounds/mate/nature/*.jpg"],
    "plasma-workspace-wallpapers": ["usr/share/wallpapers/*/contents/images/*"],
    "palapeli-data": ["usr/share/palapeli/collection/*.jpg"],
    "enlightenment-data": ["usr/share/enlightenment/data/backgrounds/*.edj"],
    "gcompris-qt-data": ["usr/share/gcompris-qt/rcc/*.rcc"],
    "tuxpaint-stamps-default": ["usr/share/tuxpaint/stamps/**/*.png"],
}
# gcompris resource files that hold paintings, drawings or symbols rather than photographs
# Enlightenment backgrounds that are drawings or patterns (edje_decc takes minutes per file: skip them early)
EDJ_SKIP = {"Squiggle", "Squiggle-Light", "Squiggle-Mid", "Squiggle-Dark", "Flat-Fan", "Flat-Stone-Pattern", "Dunes"}
# The four Enlightenment photos the committed split (split.json, sources.csv) was built from: the first unpacking was
# stopped for time after them, and a fifth would reshuffle every later package's train / held-out split.
EDJ_KEEP = {"Bamboo", "Foggy-Trees", "God-Rays", "Green-Maple"}
GCOMPRIS_SKIP = {"paintings.rcc", "clickgame.rcc", "louis-braille.rcc", "solar_system.rcc", "gravity.rcc",
                 "digital_electricity.rcc", "chronos.rcc"}


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def largest_per_folder(paths):
    """Plasma ships one wallpaper in many sizes: keep the largest file of each wallpaper folder."""
    best = {}
    for p in paths:
        key = p.split("/contents/")[0]
        if key not in best or os.path.getsize(p) > os.path.getsize(best[key]):
            best[key] = p
    return sorted(best.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--only", help="comma-separated packages to collect (default: all)")
    args = ap.parse_args()
    unpacked, raw = (os.path.join(args.work, d) for d in ("x", "raw"))
    only = set(args.only.split(",")) if args.only else set(SOURCES)
    roots = {pkg: debcache.unpacked(pkg, unpacked) for pkg in SOURCES if pkg in only}
    for pkg, patterns in SOURCES.items():
        if pkg not in only:
            continue
        root = roots[pkg]
        out = os.path.join(raw, pkg)
        os.makedirs(out, exist_ok=True)
        files = sorted(f for pat in patterns for f in glob.glob(os.path.join(root, pat), recursive=True))
        if pkg == "plasma-workspace-wallpapers":
            files = largest_per_folder(files)
        count = 0
        for f in files:
            rel = os.path.relpath(f, root)
            if f.endswith(".edj"):
                if os.path.basename(f)[:-4] in EDJ_SKIP or os.path.basename(f)[:-4] not in EDJ_KEEP:
                    continue
                tmp = os.path.join(args.work, "edj", os.path.basename(f)[:-4])
                if not os.path.isdir(tmp):
                    run(["edje_decc", f, "-output", tmp], stdout=subprocess.DEVNULL)
                imgs = [i for i in glob.glob(os.path.join(tmp, "**", "*"), recursive=True)
                        if i.lower().endswith((".jpg", ".jpeg", ".png")) and os.path.getsize(i) > 200_000]
                for i in imgs:
                    shutil.copy(i, os.path.join(out, os.path.basename(f)[:-4] + "__" + os.path.basename(i)))
                    count += 1
            elif f.endswith(".rcc"):
                if os.path.basename(f) in GCOMPRIS_SKIP:
                    continue
                for name, blob in read_rcc(f):
                    if name.lower().endswith((".jpg", ".jpeg", ".webp")):
                        flat = name.replace("gcompris/src/activities/", "").replace("/", "__")
                        open(os.path.join(out, flat), "wb").write(blob)
                        count += 1
            else:
                shutil.copy(f, os.path.join(out, rel.replace("/", "__")))
                count += 1
        print(f"{pkg}: {count} candidate images")


if __name__ == "__main__":
    main()
