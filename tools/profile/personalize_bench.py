#!/usr/bin/env python3
"""`colorcam personalize` on 200 photos: peak memory, the frozen cache's cost and the training step's, each beside a
peer measured in the same script.

    python3 tools/profile/personalize_bench.py [--photos 200] [--minutes 3] [--train decoder] [--work /tmp/pz-bench]

The photos: every colour JPEG/PNG of the offline sets that is at hand (/work/data/themes/*, /work/data/color/raw/*;
build them with tools/personalize/collect_themes.py and tools/train/collect.py), cycled to --photos files by random
crops (70–100 %) saved as JPEG q90, so each file differs; one in ten is upscaled to 4032x3024 (a phone photo) to
make decoding peak where a user's would. Then, on one core (`taskset -c 0`):
  - `colorcam personalize` over them: peak RSS (getrusage of the child), the manifest's frozen-cache seconds, train
    views, step ms per view;
  - the peer: `colorcam bench infer` of the base model at 256 (one inference, p50): the frozen cache costs one
    inference per view, so its per-view time over this is the cache's overhead; a training step (forward + backward
    of the trained part) is also given as a multiple of it.
Figures only (no verdict); the issue's target is peak <= 1 GB for 200 photos.
"""
import argparse
import glob
import json
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_photos(work, count, seed):
    sources = sorted(f for pattern in ("/work/data/themes/*/*", "/work/data/color/raw/*/*")
                     for f in glob.glob(pattern) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    def coloured(path):  # the raw candidates include a few greyscale pictures, which personalize refuses
        im = Image.open(path)
        im.draft("RGB", (128, 128))
        return np.asarray(im.convert("HSV"))[..., 1].mean() > 25
    sources = [f for f in sources if coloured(f)]
    if not sources:
        raise SystemExit("no offline photos found: run tools/personalize/collect_themes.py first")
    out = os.path.join(work, "photos")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(count):
        path = os.path.join(out, f"photo-{i:03d}.jpg")
        if os.path.exists(path):
            continue
        im = Image.open(sources[i % len(sources)]).convert("RGB")
        w, h = im.size
        cw, ch = int(w * rng.uniform(0.7, 1)), int(h * rng.uniform(0.7, 1))
        x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
        im = im.crop((x, y, x + cw, y + ch))
        if i % 10 == 0:
            im = im.resize((4032, 3024), Image.BILINEAR)
        im.save(path, quality=90)
    return out, len(sources)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--photos", type=int, default=200)
    ap.add_argument("--minutes", type=float, default=3)
    ap.add_argument("--train", default="decoder")
    ap.add_argument("--work", default="/tmp/pz-bench")
    ap.add_argument("--colorcam", default=os.path.join(ROOT, ".build", "release", "colorcam"))
    ap.add_argument("--json")
    args = ap.parse_args()
    photos, distinct = make_photos(args.work, args.photos, 7)
    cpu = open("/proc/cpuinfo").read()
    model = re.search(r"model name\s*:\s*(.*)", cpu).group(1)
    isa = "AVX-512" if " avx512f" in cpu else "AVX2" if " avx2" in cpu else "baseline"
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    print(f"machine: {model} ({isa}); OPENBLAS_* set: {env or 'none'}")

    bench = subprocess.run(["taskset", "-c", "0", args.colorcam, "bench", "infer",
                            os.path.join(ROOT, "Models", "colorcam-default", "model.onnx"), "--runs", "20"],
                           capture_output=True, text=True, check=True)
    p50 = float(re.search(r"p50\s*[=:]?\s*([0-9.]+)\s*ms", bench.stdout + bench.stderr).group(1))

    bundle = os.path.join(args.work, "bundle")
    t0 = time.monotonic()
    run = subprocess.run(["taskset", "-c", "0", args.colorcam, "personalize", "--photos", photos, "--out", bundle,
                          "--minutes", str(args.minutes), "--train", args.train], capture_output=True, text=True)
    wall = time.monotonic() - t0
    if run.returncode != 0:
        raise SystemExit(f"personalize failed ({run.returncode}): {run.stderr.strip()}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    m = json.load(open(os.path.join(bundle, "manifest.json")))["personalized"]
    views = m["train_views"] + m["heldout_after"]["views"]
    cache_ms = 1000 * m["frozen_cache_seconds"] / max(1, views)
    print(f"photos: {args.photos} files ({distinct} distinct sources, every tenth 4032x3024), --train {args.train}, "
          f"--minutes {args.minutes}: {wall:.0f} s wall")
    print(f"peak RSS (personalize)            {peak_mb:8.0f} MB   (target <= 1024 MB: {peak_mb / 1024:.2f} of it)")
    print(f"frozen cache                      {m['frozen_cache_mb']:8d} MB   {views} views in "
          f"{m['frozen_cache_seconds']:.1f} s = {cache_ms:.1f} ms/view (view making + one inference + storing)")
    print(f"peer: one inference (bench infer) {p50:8.1f} ms   -> cache per view / inference = {cache_ms / p50:.2f}")
    print(f"training step (fwd + bwd, 1 view) {m['step_ms_per_view']:8.1f} ms   -> "
          f"{m['step_ms_per_view'] / p50:.2f} x one inference; {m['steps']} steps of 8 views")
    if args.json:
        json.dump({"peak_rss_mb": peak_mb, "inference_p50_ms": p50, "cache_ms_per_view": cache_ms,
                   "step_ms_per_view": m["step_ms_per_view"], "views": views, "cache_mb": m["frozen_cache_mb"],
                   "photos": args.photos, "machine": model, "isa": isa}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
