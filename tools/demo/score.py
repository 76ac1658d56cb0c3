#!/usr/bin/env python3
"""Scores colorcam's saved photos (`colorcam replay … --save-photos DIR`) against the bundled colour originals.

    python3 tools/demo/score.py --photos demo/photos --originals Assets/demo-photos [--truth demo/truth.json]
                                [--min-correlation 0.6] [--require-better] [--json]

Input: per physical photo, DIR/photo-<track>.png (upright rectified colorized RGB) and DIR/photo-<track>.json
({"track", "first_frame", "last_frame", "corners", "model", "width", "height"}).

Matching: each saved photo is compared with every original in each of the 4 rotations (0/90/180/270°, no flips),
the original resized (area) to the saved photo's size; the pair with the highest normalised correlation of CIE L
wins. A saved photo whose best correlation is below --min-correlation matches nothing.

Metrics per matched photo, against the original at the saved size (Lab: skimage.color, the constants of
tools/train/labcolor.py, so the same definitions as training's eval.py):
  RGB PSNR (dB, sRGB 0..1) of the saved photo, and of the grey baseline: the saved photo's own L with a = b = 0;
  Hasler–Süsstrunk colourfulness M (8-bit RGB) of saved, original and grey;
  ab L1: mean |a − a*| and |b − b*| (Lab units) of saved and of grey (= mean |ab| of the original).
Overall: means over the matched photos (PSNR in dB averaged over photos, as eval.py does).

The photo-set check ("each physical photo saved once") fails, exit 1, when a saved photo matches no original, two
saved photos match the same original, or an original that is in the scene was not saved. The originals in the
scene are the "file"s of --truth's prints when given, else every PNG in --originals.
--require-baselines exits 1 unless every matched photo beats the grey baseline on ab L1 and the sepia baseline
(a, b = 5, 15 everywhere) on hue agreement (pixels with original chroma > 10 whose chroma > 5 and hue is within 30°).
--require-better also exits 1 unless the saved photos beat the grey baseline on mean PSNR (by ≥ 0.1 dB) and mean
colourfulness (by ≥ 1.0).
Bad input (missing folder, unreadable PNG/JSON, sidecar disagreeing with its PNG) exits 65/66 with one line.
"""
import argparse
import json
import os
import re
import sys

import numpy as np
from PIL import Image
from skimage.color import lab2rgb, rgb2lab

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "train"))
from colour_metrics import SEPIA_AB, colourfulness, hue_counts  # noqa: E402  (numpy only)

# "Better than the grey baseline" needs a margin, so rounding noise in a grey capture does not count as colour.
MIN_PSNR_GAIN_DB, MIN_COLOURFULNESS_GAIN = 0.1, 1.0
SIDECAR_KEYS = {"track", "first_frame", "last_frame", "corners", "model", "width", "height"}


def bad_input(message, code=65):
    sys.stderr.write(f"score: {message}\n")
    sys.exit(code)


def read_rgb(path):
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except (OSError, ValueError) as error:
        bad_input(f"{path}: not a readable image ({error})")


def load_saved(folder):
    """[(track id, png path, sidecar dict, uint8 RGB)] for every photo-<track>.png in folder, by track id."""
    if not os.path.isdir(folder):
        bad_input(f"{folder}: no such folder (the --save-photos output)", 66)
    saved = []
    for name in sorted(os.listdir(folder)):
        match = re.fullmatch(r"photo-(\d+)\.png", name)
        if not match:
            continue
        png = os.path.join(folder, name)
        side = png[:-4] + ".json"
        if not os.path.exists(side):
            bad_input(f"{side}: missing (every photo-<track>.png needs its JSON sidecar)")
        try:
            meta = json.load(open(side))
        except (OSError, ValueError) as error:
            bad_input(f"{side}: not JSON ({error})")
        missing = SIDECAR_KEYS - set(meta)
        if missing:
            bad_input(f"{side}: lacks {sorted(missing)}")
        rgb = read_rgb(png)
        if meta["track"] != int(match.group(1)):
            bad_input(f"{side}: track {meta['track']} but the file is named for track {match.group(1)}")
        if (meta["width"], meta["height"]) != (rgb.shape[1], rgb.shape[0]):
            bad_input(f"{side}: says {meta['width']}x{meta['height']} but the PNG is {rgb.shape[1]}x{rgb.shape[0]}")
        saved.append((int(match.group(1)), png, meta, rgb))
    saved.sort(key=lambda s: s[0])
    return saved


def load_originals(folder):
    if not os.path.isdir(folder):
        bad_input(f"{folder}: no such folder (the bundled colour originals)", 66)
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith(".png"))
    if not names:
        bad_input(f"{folder}: no PNG originals", 66)
    return {name: read_rgb(os.path.join(folder, name)) for name in names}


def to_lab(rgb_u8):
    return rgb2lab(rgb_u8.astype(np.float64) / 255.0)


def resized(rgb_u8, width, height):
    return np.asarray(Image.fromarray(rgb_u8).resize((width, height), Image.BOX))


def correlation(a, b):
    a, b = a - a.mean(), b - b.mean()
    denominator = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / denominator) if denominator > 0 else 0.0


def best_match(saved_rgb, originals):
    """(correlation, original name, quarter turns, original resized in that orientation) of the best pair."""
    h, w = saved_rgb.shape[:2]
    saved_l = to_lab(saved_rgb)[..., 0]
    best = None
    for name, original in originals.items():
        for turns in range(4):
            candidate = resized(np.ascontiguousarray(np.rot90(original, turns)), w, h)
            r = correlation(saved_l, to_lab(candidate)[..., 0])
            if best is None or r > best[0]:
                best = (r, name, turns, candidate)
    return best


def psnr(rgb01, truth01):
    mse = float(((rgb01 - truth01) ** 2).mean())
    return 10 * np.log10(1.0 / max(mse, 1e-12))


def photo_metrics(saved_rgb, original_rgb):
    saved01, truth01 = saved_rgb / 255.0, original_rgb / 255.0
    lab, lab_truth = to_lab(saved_rgb), to_lab(original_rgb)
    grey_lab = lab.copy()
    grey_lab[..., 1:] = 0
    grey01 = lab2rgb(grey_lab)
    return {"psnr_db": psnr(saved01, truth01), "grey_psnr_db": psnr(grey01, truth01),
            "colourfulness": colourfulness(saved01), "grey_colourfulness": colourfulness(grey01),
            "original_colourfulness": colourfulness(truth01),
            "ab_l1": float(np.abs(lab[..., 1:] - lab_truth[..., 1:]).mean()),
            "grey_ab_l1": float(np.abs(lab_truth[..., 1:]).mean()),
            "hue_agreement": hue_agreement(lab[..., 1:], lab_truth[..., 1:]),
            "sepia_hue_agreement": hue_agreement(np.broadcast_to(SEPIA_AB, lab_truth[..., 1:].shape),
                                                 lab_truth[..., 1:])}


def hue_agreement(ab, ab_truth):
    """colour_metrics.hue_counts as a share (0 when the original has no pixel with chroma > 10)."""
    agreeing, counted = hue_counts(ab, ab_truth)
    return agreeing / counted if counted else 0.0



def score(saved, originals, in_scene, min_correlation):
    photos, problems = [], []
    for track, png, meta, rgb in saved:
        r, name, turns, original = best_match(rgb, originals)
        entry = {"track": track, "file": os.path.basename(png), "size": [rgb.shape[1], rgb.shape[0]],
                 "frames": [meta["first_frame"], meta["last_frame"]], "model": meta["model"],
                 "correlation": r, "original": name if r >= min_correlation else None, "rotation_deg": 90 * turns}
        if r < min_correlation:
            problems.append(f"{entry['file']} (track {track}, frames {meta['first_frame']}-{meta['last_frame']}, "
                            f"{rgb.shape[1]}x{rgb.shape[0]}) matches no original (best: {name}, correlation {r:.2f} "
                            f"< {min_correlation}): a partial or wrong view saved as a photo?")
        else:
            entry.update(photo_metrics(rgb, original))
        photos.append(entry)
    by_original = {}
    for p in photos:
        if p["original"]:
            by_original.setdefault(p["original"], []).append(p["file"])
    for name, files in sorted(by_original.items()):
        if len(files) > 1:
            problems.append(f"{name} saved {len(files)} times: {', '.join(files)} (one physical photo, several saves)")
    for name in sorted(in_scene):
        if name not in by_original:
            problems.append(f"{name} is in the scene but no saved photo matches it")
    matched = [p for p in photos if p["original"]]
    overall = {}
    if matched:
        for key in ("psnr_db", "grey_psnr_db", "colourfulness", "grey_colourfulness", "original_colourfulness",
                    "ab_l1", "grey_ab_l1", "hue_agreement", "sepia_hue_agreement"):
            overall[key] = float(np.mean([p[key] for p in matched]))
        overall["better_than_grey"] = bool(
            overall["psnr_db"] >= overall["grey_psnr_db"] + MIN_PSNR_GAIN_DB
            and overall["colourfulness"] >= overall["grey_colourfulness"] + MIN_COLOURFULNESS_GAIN)
        overall["each_beats_baselines"] = all(
            p["ab_l1"] < p["grey_ab_l1"] and p["hue_agreement"] > p["sepia_hue_agreement"] for p in matched)
    return {"photos": photos, "overall": overall, "problems": problems, "photo_set_ok": not problems}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photos", required=True, help="the --save-photos folder")
    parser.add_argument("--originals", required=True, help="the colour originals (Assets/demo-photos)")
    parser.add_argument("--truth", help="the scene's truth.json: which originals are in the scene")
    parser.add_argument("--min-correlation", type=float, default=0.6)
    parser.add_argument("--require-better", action="store_true")
    parser.add_argument("--require-baselines", action="store_true",
                        help="exit 1 unless every matched photo beats grey on ab L1 and sepia on hue agreement")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    originals = load_originals(args.originals)
    in_scene = set(originals)
    if args.truth:
        try:
            in_scene = {p["file"] for p in json.load(open(args.truth))["prints"]}
        except (OSError, ValueError, KeyError, TypeError) as error:
            bad_input(f"{args.truth}: not a scene truth file ({error})")
        unknown = in_scene - set(originals)
        if unknown:
            bad_input(f"{args.truth}: prints {sorted(unknown)} have no original in {args.originals}")
    result = score(load_saved(args.photos), originals, in_scene, args.min_correlation)
    if args.json:
        print(json.dumps(result))
    else:
        for p in result["photos"]:
            if p["original"] is None:
                print(f"{p['file']}: no match (correlation {p['correlation']:.2f})")
                continue
            print(f"{p['file']} ({p['size'][0]}x{p['size'][1]}, frames {p['frames'][0]}-{p['frames'][1]}) = "
                  f"{p['original']} rot {p['rotation_deg']} (r {p['correlation']:.3f}): "
                  f"PSNR {p['psnr_db']:.2f} dB vs grey {p['grey_psnr_db']:.2f}; colourfulness "
                  f"{p['colourfulness']:.1f} vs grey {p['grey_colourfulness']:.1f} (original "
                  f"{p['original_colourfulness']:.1f}); ab L1 {p['ab_l1']:.2f} vs grey {p['grey_ab_l1']:.2f}; hue "
                  f"agreement {100 * p['hue_agreement']:.1f} % vs sepia {100 * p['sepia_hue_agreement']:.1f} %")
        o = result["overall"]
        if o:
            print(f"overall ({sum(1 for p in result['photos'] if p['original'])} photos): PSNR {o['psnr_db']:.2f} dB "
                  f"vs grey {o['grey_psnr_db']:.2f}; colourfulness {o['colourfulness']:.1f} vs grey "
                  f"{o['grey_colourfulness']:.1f} (originals {o['original_colourfulness']:.1f}); ab L1 "
                  f"{o['ab_l1']:.2f} vs grey {o['grey_ab_l1']:.2f}; hue agreement {100 * o['hue_agreement']:.1f} % "
                  f"vs sepia {100 * o['sepia_hue_agreement']:.1f} %; "
                  f"{'better' if o['better_than_grey'] else 'NOT better'} than the grey baseline")
        print("photo set: " + ("each photo in the scene saved once" if result["photo_set_ok"] else "WRONG"))
    for problem in result["problems"]:
        sys.stderr.write(f"score: FAIL: {problem}\n")
    if not result["photo_set_ok"]:
        sys.exit(1)
    if args.require_better and not result["overall"].get("better_than_grey", False):
        sys.stderr.write("score: FAIL: the saved photos do not beat the grey baseline on PSNR and colourfulness\n")
        sys.exit(1)
    if args.require_baselines and not result["overall"].get("each_beats_baselines", False):
        sys.stderr.write("score: FAIL: a saved photo does not beat grey on ab L1 or sepia on hue agreement\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
