#!/usr/bin/env python3
"""Personalization judged through the product (issue #27), per theme.

    python3 tools/personalize/theme_eval.py [--work /work/data/themes] [--out /tmp/theme-eval] [--minutes 5]
        [--train head] [--themes sky_water,green,buildings] [--general-count 45] [--json OUT.json]

The themed sets come from tools/personalize/collect_themes.py (themes.csv: photos the default model never trained
on, split 70/30 per theme). For each theme:
  1. `colorcam personalize --photos TRAIN --out BUNDLE --minutes M` on one core (`taskset -c 0`), timed;
     TRAIN = the theme's training photos only (WebP sources converted to PNG: colorcam reads JPEG/PNG);
  2. tools/train/pipeline_eval.py --photos-from HELDOUT: the theme's held-out photos rendered as prints into
     short recordings, `colorcam replay --save-photos`, saved photos scored against the originals — with the base
     model and with the bundle (same clips);
  3. the same on the general held-out set (split.json "heldout", --general-count photos) with the bundle, against
     the base model's figures on it.
Prints one table per theme and overall; exit 0 whatever the figures (it measures, the note judges).
Nothing here chooses a setting: the run's options are the defaults of `colorcam personalize` (plus --args).

--inner: the training-side version, for choosing personalize's defaults without looking at any held-out photo.
Each theme's *training* photos are split again (seeded, 30 %) into inner training and inner validation photos;
personalize learns from the first and is scored through the product on the second; the general set is 45 photos
of the default model's *training* split that are not among the rehearsal photos (Models/colorcam-default/rehearsal),
written as PNG from WORK_COLOR/cache.npz. Neither the themes' held-out photos nor the general held-out set is read.
"""
import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def split_dirs(work, out, themes):
    """WORK/<theme>/<id>.* -> OUT/photos/<theme>/{train,heldout}/<id>.{jpg,png} (WebP converted to PNG)."""
    rows = list(csv.DictReader(open(os.path.join(HERE, "themes.csv"))))
    for row in rows:
        if row["theme"] not in themes:
            continue
        src_dir = os.path.join(work, row["theme"])
        src = next((os.path.join(src_dir, f) for f in os.listdir(src_dir) if os.path.splitext(f)[0] == row["id"]),
                   None)
        if src is None:
            raise SystemExit(f"{src_dir}/{row['id']}.*: missing (run tools/personalize/collect_themes.py)")
        dst_dir = os.path.join(out, "photos", row["theme"], row["split"])
        os.makedirs(dst_dir, exist_ok=True)
        ext = os.path.splitext(src)[1].lower()
        if ext in (".jpg", ".jpeg", ".png"):
            dst = os.path.join(dst_dir, row["id"] + ext)
            if not os.path.exists(dst):
                os.symlink(os.path.abspath(src), dst)
        else:
            dst = os.path.join(dst_dir, row["id"] + ".png")
            if not os.path.exists(dst):
                Image.open(src).convert("RGB").save(dst)
    return {t: {s: os.path.join(out, "photos", t, s) for s in ("train", "heldout")} for t in themes}


def inner_dirs(dirs, out, themes):
    """Splits each theme's training photos into inner train / inner validation folders (seeded, 30 %)."""
    import random
    inner = {}
    for t in themes:
        files = sorted(os.listdir(dirs[t]["train"]))
        val = set(random.Random(f"inner:{t}").sample(files, max(5, round(0.3 * len(files)))))
        inner[t] = {}
        for split, chosen in (("train", [f for f in files if f not in val]), ("heldout", sorted(val))):
            d = os.path.join(out, "inner", t, split)
            os.makedirs(d, exist_ok=True)
            for f in chosen:
                if not os.path.exists(os.path.join(d, f)):
                    os.symlink(os.path.realpath(os.path.join(dirs[t]["train"], f)), os.path.join(d, f))
            inner[t][split] = d
    return inner


def general_train_dir(work_color, out, count):
    """`count` photos of the default model's training split that are not rehearsal photos, as PNG (seeded)."""
    import random
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    from labcolor import lab2rgb
    split = json.load(open(os.path.join(ROOT, "tools", "train", "split.json")))
    rehearsal = {r["id"] for r in csv.DictReader(open(os.path.join(ROOT, "Models", "colorcam-default", "rehearsal",
                                                                   "sources.csv")))}
    ids = sorted(set(split["train"]) - rehearsal)
    chosen = random.Random("inner:general").sample(ids, min(count, len(ids)))
    d = os.path.join(out, "inner", "general")
    os.makedirs(d, exist_ok=True)
    cache = np.load(os.path.join(work_color, "cache.npz"))
    for pid in chosen:
        path = os.path.join(d, pid + ".png")
        if not os.path.exists(path):
            rgb = np.round(lab2rgb(cache[pid].astype(np.float64)) * 255).astype(np.uint8)
            Image.fromarray(rgb).save(path)
    return d


def pipeline(colorcam, photos_from, out, model, extra=()):
    cmd = [sys.executable, os.path.join(ROOT, "tools", "train", "pipeline_eval.py"), "--colorcam", colorcam,
           "--out", out, "--json", out + ".json", "--sheet", out + ".png"] + list(extra)
    if photos_from:
        cmd += ["--photos-from", photos_from, "--count", "1000"]
    if model:
        cmd += ["--model", model]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"pipeline_eval failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return json.load(open(out + ".json"))


def figures(result):
    p = result["pipeline"] if "pipeline" in result else result
    return {"ab_l1": p["ab_l1"], "hue": p["hue"], "views": p.get("photos"), "colourful": p.get("colourful"),
            "sepia_hue": p.get("sepia_hue"), "grey_l1": p.get("grey_l1")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/work/data/themes")
    ap.add_argument("--out", default="/tmp/theme-eval")
    ap.add_argument("--colorcam", default=os.path.join(ROOT, ".build", "release", "colorcam"))
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--train", help="personalize --train (default: personalize's own default)")
    ap.add_argument("--themes", default="sky_water,green,buildings")
    ap.add_argument("--general-count", type=int, default=45)
    ap.add_argument("--json")
    ap.add_argument("--cpu", type=int, default=0, help="the core personalize runs on (taskset)")
    ap.add_argument("--inner", action="store_true", help="training-side split only (see above)")
    ap.add_argument("--work-color", default="/work/data/color", help="--inner: the colour dataset (cache.npz)")
    ap.add_argument("--args", default="", help="more personalize arguments, e.g. '--learning-rate 1e-3'")
    args = ap.parse_args()
    themes = args.themes.split(",")
    os.makedirs(args.out, exist_ok=True)
    dirs = split_dirs(args.work, args.out, themes)
    general_from = None
    if args.inner:
        dirs = inner_dirs(dirs, args.out, themes)
        general_from = general_train_dir(args.work_color, args.out, args.general_count)
    general_base = pipeline(args.colorcam, general_from, os.path.join(args.out, "general-base"), None,
                            ["--count", str(args.general_count)])
    report = {"general_base": figures(general_base), "themes": {}}
    for theme in themes:
        bundle = os.path.join(args.out, f"bundle-{theme}")
        t0 = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = subprocess.run(["taskset", "-c", str(args.cpu), args.colorcam, "personalize", "--photos", dirs[theme]["train"],
                              "--out", bundle, "--minutes", str(args.minutes)]
                             + (["--train", args.train] if args.train else [])
                             + args.args.split(),
                             capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - t0
        if run.returncode != 0:
            raise SystemExit(f"{theme}: personalize failed ({run.returncode}): {run.stderr.strip()}")
        print(run.stdout.strip())
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))["personalized"]
        base = pipeline(args.colorcam, dirs[theme]["heldout"], os.path.join(args.out, f"{theme}-base"), None)
        mine = pipeline(args.colorcam, dirs[theme]["heldout"], os.path.join(args.out, f"{theme}-mine"), bundle)
        general = pipeline(args.colorcam, general_from, os.path.join(args.out, f"general-{theme}"), bundle,
                           ["--count", str(args.general_count)])
        entry = {"train_photos": len(os.listdir(dirs[theme]["train"])),
                 "heldout_photos": len(os.listdir(dirs[theme]["heldout"])),
                 "personalize_wall_s": round(wall, 1),
                 "personalize_cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
                 "personalize_own_split": {"before": manifest["heldout_before"], "after": manifest["heldout_after"]},
                 "steps": manifest["steps"], "step_ms_per_view": manifest["step_ms_per_view"],
                 "heldout_base": figures(base), "heldout_mine": figures(mine), "general_mine": figures(general)}
        report["themes"][theme] = entry
        b, m, g, gb = entry["heldout_base"], entry["heldout_mine"], entry["general_mine"], report["general_base"]
        print(f"\n{theme}: {entry['train_photos']} train / {entry['heldout_photos']} held-out photos; personalize "
              f"{wall:.0f} s wall, {entry['personalize_cpu_s']} s CPU, {manifest['steps']} steps")
        print(f"  {'':34s} {'ab L1':>7s} {'hue':>7s} {'views':>5s}")
        print(f"  {'theme held-out, base':34s} {b['ab_l1']:7.2f} {100 * b['hue']:6.1f}% {b['views']:5d}")
        print(f"  {'theme held-out, personalized':34s} {m['ab_l1']:7.2f} {100 * m['hue']:6.1f}% {m['views']:5d}")
        print(f"  {'  change':34s} {100 * (b['ab_l1'] - m['ab_l1']) / b['ab_l1']:6.1f}% "
              f"{100 * (m['hue'] - b['hue']):+6.1f} pts")
        print(f"  {'general held-out, base':34s} {gb['ab_l1']:7.2f} {100 * gb['hue']:6.1f}% {gb['views']:5d}")
        print(f"  {'general held-out, personalized':34s} {g['ab_l1']:7.2f} {100 * g['hue']:6.1f}% {g['views']:5d}")
        print(f"  {'  change (worse +)':34s} {100 * (g['ab_l1'] - gb['ab_l1']) / gb['ab_l1']:6.1f}% "
              f"{100 * (g['hue'] - gb['hue']):+6.1f} pts", flush=True)
        if args.json:
            json.dump(report, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
