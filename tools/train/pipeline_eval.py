#!/usr/bin/env python3
"""Colour judged through the product: held-out photos printed, filmed, replayed with --save-photos, and scored.

    python3 tools/train/pipeline_eval.py [--work /work/data/color] [--count 45] [--seed 5] [--frames 16]
        [--colorcam .build/release/colorcam] [--model DIR] [--out DIR] [--json OUT.json] [--sheet OUT.png]
        [--clips-from EARLIER_OUT]

For each held-out photo (split.json "heldout", never trained or tuned on) it renders a short still recording with
the detect generator (tools/scenes/dr_render.py, held-out tables): one or two prints of that photo, black-and-white
or toned (the generator draws style, crop, border, fading, light, camera; scene seeds are tried in order until a
scene holds only prints of this photo in those styles). `colorcam replay --pace asap --save-photos` runs on it, and
each saved photo is compared with the photo's own colours over the picture (the print's border left out), after
finding which of the 8 orientations the saved view has (best correlation of L). Also `colorcam colorize --whole` on
the clean photo (its L only, as a grey PNG), and on each print's own picture (the part of the photo the print shows:
its crop, upright, L only): the clean-photo and clean-print figures, the second the camera path's own reference.

Metrics (issue #24), per saved photo and overall:
  ab L1        mean |a - a*| + |b - b*| over 2 (Lab units), averaged over saved photos
  hue          share of pixels with original chroma > 10 whose predicted chroma > 5 and hue within 30 deg (pooled)
  colourful    Hasler & Suesstrunk M of the saved picture / M of the original, summed over saved photos
  blob         share of pixels with predicted chroma > 40 where the original's chroma < 10 (worst photo reported)
Saved views whose L correlates < --min-correlation (0.6, as tools/demo/score.py) with their print in the best
orientation are a wrong outline or view, not a colour result: counted apart and left out of the figures.
Hue is also split by the print's size in the frame (its outline's longest side: < 80, 80-140, >= 140 px), through
the pipeline against the same views' photos and prints clean (weighted by the views' counted pixels): where the camera
costs colour; and by how the print's view lay against the upright picture (a print lying turned on the table is
rectified turned: the saved picture's orientation found above, less the sidecar's upright_turns, the quarter turns
the product's orientation head chose and saved the picture turned by, `UprightTurner`), and by whether the product
coloured it upright (the saved picture's orientation found above is upright).
Baselines on the same pixels: grey (ab = 0) and sepia (ab = 5, 15). The script prints a table, writes --json, and
--sheet: one tile per saved photo, worst hue first (the saved view's L, [--before: the earlier run's saved photo,]
the saved photo, the original's picture).
--hints K (issue #28's curve through the product): each print in a clip gets K colour hints, clicked at frame 2
(`replay --hint-click`): centre-biased points of its picture, each with the original's mean colour over 5x5 print
pixels there, placed in the frame through the print's truth corners (its orientation found by correlating the warped
print with the clip's first frame).
Exit 1 if no photo was saved at all (the figures would say nothing).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
sys.path.insert(0, HERE)
import dr_render  # noqa: E402
import metrics as scene_metrics  # noqa: E402
from colour_metrics import SEPIA_AB, colourfulness, hue_counts  # noqa: E402
from labcolor import lab2rgb, rgb2lab  # noqa: E402
from render import write_y4m_frame  # noqa: E402


def scene_for(photo_id, rgb, seed):
    """The first scene seed from `seed` whose prints are all of this photo and black-and-white or toned."""
    for k in range(400):
        s = seed + k
        frame, corners, scene = dr_render.render(s, [(photo_id, rgb)], 640, 480, "heldout", frame_index=0)
        prints = scene["photos"]
        if 1 <= len(prints) <= 2 and all(p["photo"] == photo_id and p["style"] != "colour" for p in prints):
            return s, scene
    raise SystemExit(f"{photo_id}: no scene of 400 holds only black-and-white prints of it")


def write_clip(path, seed, photo_id, rgb, frames):
    with open(path + ".partial", "wb") as handle:
        handle.write(b"YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg\n")
        for i in range(frames):
            frame, _, scene = dr_render.render(seed, [(photo_id, rgb)], 640, 480, "heldout", frame_index=i)
            write_y4m_frame(handle, frame)
    os.replace(path + ".partial", path)
    return scene


def truth_print(rgb, info):
    """The print's picture in the photo's own colours (print px, border included) and the picture's mask."""
    x0, y0, cw, ch = info["crop"]
    pw, ph = info["size"]
    pad = info["pad_px"]
    inner = cv2.resize(rgb[y0:y0 + ch, x0:x0 + cw], (pw - 2 * pad, ph - 2 * pad), interpolation=cv2.INTER_AREA)
    full = np.zeros((ph, pw, 3), np.uint8)
    full[pad:ph - pad, pad:pw - pad] = inner
    mask = np.zeros((ph, pw), np.uint8)
    m = pad + int(round(0.02 * min(pw, ph)))  # leave out the picture's outermost 2 %: the saved view's edge
    mask[m:ph - m, m:pw - m] = 1
    return full, mask


def hint_clicks(clip_path, scene, rgb, k, seed, frame=2):
    """`--hint-click` arguments: k hints per print of the clip (see the module doc); each print's points are the
    first k of one draw (seeded by `seed` and the print), so more hints add points."""
    if k == 0:
        return []
    with open(clip_path, "rb") as f:
        f.readline()
        f.readline()
        luma = np.frombuffer(f.read(640 * 480), np.uint8).reshape(480, 640).astype(np.float64)
    args = []
    for j, info in enumerate(scene["photos"]):
        rng = np.random.default_rng(seed * 10 + j)
        full, mask = truth_print(rgb, info)
        ph, pw = full.shape[:2]
        src = np.float32([[0, 0], [pw, 0], [pw, ph], [0, ph]])
        corners = np.float32(info["corners"])
        grey = cv2.cvtColor(full, cv2.COLOR_RGB2GRAY).astype(np.float32)
        best = None
        for rot in range(4):
            h = cv2.getPerspectiveTransform(src, np.roll(corners, -rot, axis=0))
            warped = cv2.warpPerspective(grey, h, (640, 480))
            inside = cv2.warpPerspective(mask.astype(np.float32), h, (640, 480), flags=cv2.INTER_NEAREST) > 0.5
            if inside.sum() < 100:
                continue
            c = float(np.corrcoef(warped[inside], luma[inside])[0, 1])
            if best is None or c > best[0]:
                best = (c, h)
        if best is None:
            continue
        ys, xs = np.nonzero(mask)
        y0, y1, x0, x1 = ys.min() + 2, ys.max() - 2, xs.min() + 2, xs.max() - 2
        for _ in range(k):
            py = int(np.clip(rng.normal((y0 + y1) / 2, (y1 - y0) / 4), y0, y1))
            px = int(np.clip(rng.normal((x0 + x1) / 2, (x1 - x0) / 4), x0, x1))
            c = full[py - 2:py + 3, px - 2:px + 3].reshape(-1, 3).mean(0).round().astype(int)
            fx, fy = cv2.perspectiveTransform(np.float32([[[px + 0.5, py + 0.5]]]), best[1])[0, 0]
            if 0 <= fx < 640 and 0 <= fy < 480:
                args += ["--hint-click", f"{frame},{fx:.1f},{fy:.1f},#{c[0]:02x}{c[1]:02x}{c[2]:02x}"]
    return args


def oriented(image, flip, rot, size, interpolation):
    """`image` mirrored (flip), turned by `rot` quarter turns and resized to `size` (w, h): a saved view's frame."""
    image = image[:, ::-1] if flip else image
    return cv2.resize(np.ascontiguousarray(np.rot90(image, rot)), size, interpolation=interpolation)


def orient(saved_L, truth_rgb, mask):
    """The orientation of the truth (rotations, mirrored or not) that best matches the saved view's L:
    (correlation, truth and mask in the saved view's frame, (flip, rot)), or None."""
    best = None
    h, w = saved_L.shape
    for flip in (False, True):
        for rot in range(4):
            t = oriented(truth_rgb, flip, rot, (w, h), cv2.INTER_AREA)
            m = oriented(mask, flip, rot, (w, h), cv2.INTER_NEAREST).astype(bool)
            tl = rgb2lab(t / 255.0)[..., 0]
            a, b = saved_L[m], tl[m]
            if a.std() < 1e-6 or b.std() < 1e-6:
                continue
            c = float(np.corrcoef(a, b)[0, 1])
            if best is None or c > best[0]:
                best = (c, t, m, (flip, rot))
    return best


class UprightOracle:
    """A saved view's L coloured by the bundle's model (onnxruntime) with the picture turned upright first (the
    orientation `orient` found against the truth; a mirrored view is coloured as it lies), its ab turned back and
    combined with the view's own L. A diagnostic of orientation, not of the product (no hints, no cache)."""

    def __init__(self, bundle):
        import onnxruntime as ort
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        self.session = ort.InferenceSession(os.path.join(bundle, manifest["file"]), providers=["CPUExecutionProvider"])
        self.side = manifest["input"]["shape"][2]

    def __call__(self, L, flip, rot):
        k = 0 if flip else (-rot) % 4  # the quarter turns that make the view upright
        x = cv2.resize(np.ascontiguousarray(np.rot90(L, k)).astype(np.float32), (self.side, self.side),
                       interpolation=cv2.INTER_LINEAR)
        ab = self.session.run(None, {"L": x[None, None]})[0][0].transpose(1, 2, 0)
        ab = cv2.resize(np.ascontiguousarray(np.rot90(ab, -k)), (L.shape[1], L.shape[0]),
                        interpolation=cv2.INTER_LINEAR)
        return np.clip(lab2rgb(np.dstack([L, ab])) * 255, 0, 255)


def clean_print(colorcam, model, clip, truth, info, index):
    """The print's own picture clean: the part of the photo the print shows (`truth`, `truth_print`'s picture of
    print `index`), its L as a grey PNG colorized whole by colorcam, in print px like `truth` (border black). The
    camera path's reference: the photo clean shows more than the print does where the print is a crop of it."""
    pad = info["pad_px"]
    pw, ph = info["size"]
    inner = truth[pad:ph - pad, pad:pw - pad]
    grey = np.round(lab2rgb(np.concatenate([rgb2lab(inner / 255.0)[..., :1], np.zeros(inner.shape[:2] + (2,))], -1))
                    * 255).astype(np.uint8)
    src, out = (os.path.join(clip, f"clean-print-{index}-{name}.png") for name in ("in", "out"))
    cv2.imwrite(src, grey[..., ::-1])
    run = subprocess.run([colorcam, "colorize", src, out, "--whole"] + model, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{src}: colorcam colorize failed ({run.returncode}): {run.stderr.strip()}")
    full = np.zeros_like(truth)
    full[pad:ph - pad, pad:pw - pad] = cv2.imread(out)[..., ::-1]
    return full


def score(pred_rgb, truth_rgb, mask):
    """Figures of one colorized picture against the original, over `mask`."""
    p = rgb2lab(pred_rgb / 255.0)[mask]
    t = rgb2lab(truth_rgb / 255.0)[mask]
    ab_p, ab_t = p[:, 1:], t[:, 1:]
    sepia = np.broadcast_to(SEPIA_AB, ab_t.shape)
    ok, n = hue_counts(ab_p, ab_t)
    sok, _ = hue_counts(sepia, ab_t)
    c_t, c_p = np.hypot(*ab_t.T), np.hypot(*ab_p.T)
    grey_px = c_t < 10
    return {"ab_l1": float(np.abs(ab_p - ab_t).mean()), "grey_l1": float(np.abs(ab_t).mean()),
            "sepia_l1": float(np.abs(sepia - ab_t).mean()), "hue_ok": ok, "hue_n": n, "sepia_hue_ok": sok,
            "m_pred": colourfulness(pred_rgb[mask][None] / 255.0), "m_truth": colourfulness(truth_rgb[mask][None] / 255.0),
            "blob": float((grey_px & (c_p > 40)).sum() / max(1, len(c_t)))}


SIZE_BUCKETS_PX = ((0, 80), (80, 140), (140, 10000))  # a print's long side in the 640 x 480 frame


def summary(rows):
    if not rows:
        return None
    hue_n = sum(r["hue_n"] for r in rows)
    return {"photos": len(rows), "ab_l1": float(np.mean([r["ab_l1"] for r in rows])),
            "grey_l1": float(np.mean([r["grey_l1"] for r in rows])),
            "sepia_l1": float(np.mean([r["sepia_l1"] for r in rows])),
            "hue": sum(r["hue_ok"] for r in rows) / max(1, hue_n),
            "sepia_hue": sum(r["sepia_hue_ok"] for r in rows) / max(1, hue_n),
            "colourful": sum(r["m_pred"] for r in rows) / max(1e-9, sum(r["m_truth"] for r in rows)),
            "blob_worst": max(r["blob"] for r in rows),
            "blob_over_1pct": sum(1 for r in rows if r["blob"] > 0.01)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--split", choices=["heldout", "train"], default="heldout",
                    help="whose photos: held-out (the judgement) or training photos (for choosing a decode setting "
                         "without looking at the held-out set)")
    ap.add_argument("--count", type=int, default=45)
    ap.add_argument("--gains", default="",
                    help="comma-separated chroma gains: also score each saved photo with its ab scaled by each gain "
                         "(what a chroma gain in the graph's decode would give; clipping to sRGB ignored)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--colorcam", default=os.path.join(ROOT, ".build", "release", "colorcam"))
    ap.add_argument("--model", help="model bundle (default: colorcam's default)")
    ap.add_argument("--out", default="/tmp/colour-pipeline-eval")
    ap.add_argument("--min-correlation", type=float, default=0.6,
                    help="a saved view whose L correlates less with its print (best orientation) is a detection or "
                         "view failure, not colour: counted apart, left out of the colour figures (as score.py)")
    ap.add_argument("--upright-oracle", action="store_true",
                    help="also colour each counted view again with its picture turned upright first (the orientation "
                         "found against the truth; onnxruntime on --model's or the default bundle's model.onnx): what "
                         "knowing which way is up would give")
    ap.add_argument("--hints", type=int, default=0,
                    help="colour hints clicked on each print (replay --hint-click; see the module doc)")
    ap.add_argument("--photos-from", metavar="DIR",
                    help="judge the JPEG/PNG photos under DIR (recursively, sorted; id = file name without extension; "
                         "read like build_dataset.py: longer side <= 512 px) instead of a split of split.json: "
                         "e.g. a personalize theme's held-out photos (tools/personalize/theme_eval.py)")
    ap.add_argument("--ids", metavar="FILE",
                    help="judge these photos of --split (a JSON list of ids, in its order; e.g. a training run's "
                         "held-back.json, train.py --hold-back) instead of a seeded draw of the split")
    ap.add_argument("--clips-from", metavar="DIR",
                    help="an earlier run's --out folder over the same photos in the same order, with the same --seed "
                         "and --frames: its clips are copied instead of rendered again (a clip depends only on those); "
                         "~10x faster when only --model or --colorcam changes")
    ap.add_argument("--json")
    ap.add_argument("--sheet")
    ap.add_argument("--before", help="an earlier run's --out folder: the sheet shows its saved photo of each view too "
                                     "(same clips, same file names), as a before/after")
    args = ap.parse_args()
    split = json.load(open(os.path.join(HERE, "split.json")))
    if args.photos_from:
        from build_dataset import load_rgb
        files = sorted(f for f in glob.glob(os.path.join(args.photos_from, "**", "*"), recursive=True)
                       if f.lower().endswith((".jpg", ".jpeg", ".png")))
        if not files:
            raise SystemExit(f"{args.photos_from}: no JPEG/PNG photos")
        by_id = {os.path.splitext(os.path.basename(f))[0]: f for f in files}
        split = {args.split: list(by_id)}

        def photo_rgb(pid):
            return load_rgb(by_id[pid])
    else:
        cache = np.load(os.path.join(args.work, "cache.npz"))

        def photo_rgb(pid):
            return np.round(lab2rgb(cache[pid].astype(np.float64)) * 255).astype(np.uint8)
    model = ["--model", args.model] if args.model else []
    os.makedirs(args.out, exist_ok=True)
    pipe_rows, clean_rows, clean_print_rows, tiles = [], [], [], []
    gains = [float(g) for g in args.gains.split(",") if g]
    gain_rows = {g: [] for g in gains}
    upright_rows = []
    if args.upright_oracle:
        upright_oracle = UprightOracle(args.model or os.path.join(ROOT, "Models", "colorcam-default"))
    photos = split[args.split]
    if args.ids:
        wanted = json.load(open(args.ids))
        known = set(photos)
        missing = [pid for pid in wanted if pid not in known]
        if missing:
            raise SystemExit(f"{args.ids}: {len(missing)} ids are not in split {args.split!r} (first: {missing[0]})")
        photos = wanted
    elif args.split == "train":  # a spread of training photos, not the first packages' only
        photos = [photos[k] for k in np.random.default_rng(args.seed).permutation(len(photos))]
    for i, pid in enumerate(photos[:args.count]):
        rgb = photo_rgb(pid)
        clip = os.path.join(args.out, pid)
        os.makedirs(clip, exist_ok=True)
        truth_path = os.path.join(clip, "scene.json")
        earlier = os.path.join(args.clips_from, pid) if args.clips_from else None
        if not os.path.exists(truth_path) and earlier and os.path.exists(os.path.join(earlier, "scene.json")):
            for name in ("clip.y4m", "scene.json"):  # clip first: a scene.json marks a complete clip
                shutil.copyfile(os.path.join(earlier, name), os.path.join(clip, name + ".partial"))
                os.replace(os.path.join(clip, name + ".partial"), os.path.join(clip, name))
        if not os.path.exists(truth_path):
            seed, _ = scene_for(pid, rgb, args.seed * 1_000_000 + i * 1000)
            scene = write_clip(os.path.join(clip, "clip.y4m"), seed, pid, rgb, args.frames)
            json.dump({"seed": seed, "scene": scene}, open(truth_path, "w"))
        scene = json.load(open(truth_path))["scene"]
        # clean: the photo's L as a grey image, colorized whole
        grey = np.round(lab2rgb(np.concatenate([rgb2lab(rgb / 255.0)[..., :1], np.zeros(rgb.shape[:2] + (2,))], -1))
                        * 255).astype(np.uint8)
        cv2.imwrite(os.path.join(clip, "clean-in.png"), grey[..., ::-1])
        run = subprocess.run([args.colorcam, "colorize", os.path.join(clip, "clean-in.png"),
                              os.path.join(clip, "clean-out.png"), "--whole"] + model, capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"{pid}: colorcam colorize failed ({run.returncode}): {run.stderr.strip()}")
        clean = cv2.imread(os.path.join(clip, "clean-out.png"))[..., ::-1]
        whole = np.ones(rgb.shape[:2], bool)
        clean_rows.append(dict(score(clean.astype(np.float64), rgb.astype(np.float64), whole), photo=pid))
        photos_dir = os.path.join(clip, "photos")
        subprocess.run(["rm", "-rf", photos_dir], check=True)
        clicks = hint_clicks(os.path.join(clip, "clip.y4m"), scene, rgb, args.hints, args.seed * 1000 + i)
        run = subprocess.run([args.colorcam, "replay", os.path.join(clip, "clip.y4m"), "--pace", "asap", "--quiet",
                              "--save-photos", photos_dir, "--output", os.path.join(clip, "out.y4m")] + model + clicks,
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"{pid}: colorcam replay failed ({run.returncode}): {run.stderr.strip()}")
        found = 0
        print_clean = {}
        for meta_path in sorted(glob.glob(os.path.join(photos_dir, "photo-*.json"))):
            meta = json.load(open(meta_path))
            saved = cv2.imread(meta_path[:-5] + ".png")[..., ::-1]
            ious = [scene_metrics.quad_iou(meta["corners"], p["corners"]) for p in scene["photos"]]
            j = int(np.argmax(ious)) if ious else 0
            truth, mask = truth_print(rgb, scene["photos"][j])
            best = orient(rgb2lab(saved / 255.0)[..., 0], truth, mask)
            if best is None:
                continue
            corr, t, m, (flip, rot) = best
            if j not in print_clean:
                print_clean[j] = clean_print(args.colorcam, model, clip, truth, scene["photos"][j], j)
            cp = oriented(print_clean[j], flip, rot, (saved.shape[1], saved.shape[0]), cv2.INTER_AREA)
            # The saved picture is the view turned by upright_turns (the product's up); `rot` is the saved
            # picture's turn against the upright picture, so the view as the print lay was turned rot - upright_turns.
            coloured_turns = int(meta.get("upright_turns", 0))
            q = np.asarray(meta["corners"], np.float64)
            long_px = float(max(np.linalg.norm(q[(k + 1) % 4] - q[k]) for k in range(4)))
            row = dict(score(saved.astype(np.float64), t.astype(np.float64), m), photo=pid,
                       file=os.path.relpath(meta_path[:-5] + ".png", args.out), corr=corr, iou=ious[j] if ious else 0,
                       long_px=long_px, turned=(rot - coloured_turns) % 4 if not flip else None,
                       coloured_turns=coloured_turns)
            pipe_rows.append(row)
            clean_print_rows.append(dict(score(cp.astype(np.float64), t.astype(np.float64), m), photo=pid, corr=corr,
                                         long_px=long_px))
            found += 1
            lab_saved = rgb2lab(saved / 255.0)
            if args.upright_oracle and corr >= args.min_correlation:
                upright_rows.append(score(upright_oracle(lab_saved[..., 0], flip, rot), t.astype(np.float64), m))
            for g in gains if corr >= args.min_correlation else []:
                scaled = lab_saved.copy()
                scaled[..., 1:] *= g
                gain_rows[g].append(score(np.clip(lab2rgb(scaled) * 255, 0, 255), t.astype(np.float64), m))
            view = cv2.resize(saved, (160, 160))
            seen = np.repeat(cv2.cvtColor(view, cv2.COLOR_RGB2GRAY)[..., None], 3, 2)
            parts = [seen, view, cv2.resize(np.ascontiguousarray(t), (160, 160))]
            if args.before:
                earlier = os.path.join(args.before, row["file"])
                old = cv2.imread(earlier) if os.path.exists(earlier) else None
                parts.insert(1, np.zeros_like(view) if old is None else cv2.resize(old[..., ::-1], (160, 160)))
            tiles.append((row["hue_ok"] / max(1, row["hue_n"]), np.hstack(parts), pid))
        r = pipe_rows[-found:] if found else []
        line = " ".join(f"{x['ab_l1']:.2f}/{100 * x['hue_ok'] / max(1, x['hue_n']):.0f}%" for x in r)
        print(f"{i + 1:2d}/{args.count} {pid}: saved {found} [{line}]  clean {clean_rows[-1]['ab_l1']:.2f}/"
              f"{100 * clean_rows[-1]['hue_ok'] / max(1, clean_rows[-1]['hue_n']):.0f}%", flush=True)
    unmatched = [r for r in pipe_rows if r["corr"] < args.min_correlation]
    pipe_rows = [r for r in pipe_rows if r["corr"] >= args.min_correlation]
    clean_print_rows = [r for r in clean_print_rows if r["corr"] >= args.min_correlation]
    if unmatched:
        print(f"{len(unmatched)} saved views correlate < {args.min_correlation} with their print (a wrong outline or "
              f"view): left out of the figures")
    pipe, clean, clean_prints = summary(pipe_rows), summary(clean_rows), summary(clean_print_rows)
    if pipe is None:
        raise SystemExit("pipeline_eval: no photo was saved: the figures would say nothing")
    print(f"\n{'':28s} {'ab L1':>7s} {'hue':>7s} {'colourful':>9s} {'blob worst':>10s} {'blob>1%':>7s}")
    for name, s in (("through the pipeline", pipe), ("clean photo, colorize --whole", clean),
                    ("clean print (its picture)", clean_prints)):
        print(f"{name:29s}{s['ab_l1']:7.2f} {100 * s['hue']:6.1f}% {100 * s['colourful']:8.0f}% "
              f"{100 * s['blob_worst']:9.2f}% {s['blob_over_1pct']:7d}   ({s['photos']} photos)")
        print(f"{'  grey / sepia, same pixels':28s} {s['grey_l1']:7.2f} / {s['sepia_l1']:.2f} L1, "
              f"sepia hue {100 * s['sepia_hue']:.1f}%")
    clean_by_photo = {r["photo"]: r for r in clean_rows}
    print(f"\nby the print's size in the frame (longest side of the saved view's outline): hue through the pipeline "
          f"vs the same photos clean and the same prints clean, over the same views")
    for lo, hi in SIZE_BUCKETS_PX:
        views = [r for r in pipe_rows if lo <= r["long_px"] < hi]
        if views:
            n = sum(r["hue_n"] for r in views)
            clean_hue = sum(clean_by_photo[r["photo"]]["hue_ok"] / max(1, clean_by_photo[r["photo"]]["hue_n"])
                            * r["hue_n"] for r in views) / max(1, n)
            prints = summary([c for c in clean_print_rows if lo <= c["long_px"] < hi])
            label = f"{lo}-{hi} px" if hi < SIZE_BUCKETS_PX[-1][1] else f">= {lo} px"
            print(f"  {label:10s} {len(views):4d} views   pipeline {100 * summary(views)['hue']:5.1f}%   "
                  f"photo clean {100 * clean_hue:5.1f}%   print clean {100 * prints['hue']:5.1f}%")
    print("by how the print's view lay against the upright picture (before the product's turn): hue through "
          "the pipeline vs the same prints clean (upright)")
    for label, keep in (("upright", lambda r: r["turned"] == 0),
                        ("turned 90/180/270", lambda r: r["turned"] in (1, 2, 3)),
                        ("mirrored", lambda r: r["turned"] is None)):
        pairs = [(r, c) for r, c in zip(pipe_rows, clean_print_rows) if keep(r)]
        if pairs:
            through = summary([r for r, _ in pairs])["hue"]
            print(f"  {label:18s} {len(pairs):4d} views   pipeline {100 * through:5.1f}%   "
                  f"print clean {100 * summary([c for _, c in pairs])['hue']:5.1f}%")
    # The product's own turn (the sidecar's upright_turns: the view was coloured turned that many quarter turns).
    fed = [r for r in pipe_rows if r["turned"] is not None]
    if fed:
        right = [r for r in fed if (r["turned"] + r["coloured_turns"]) % 4 == 0]
        print(f"coloured upright: {len(right)} of {len(fed)} views (fed upright: "
              f"{sum(r['turned'] == 0 for r in fed)}; the product turned {sum(r['coloured_turns'] != 0 for r in fed)})")
        for label, keep in (("coloured upright", lambda r: r in right), ("coloured turned", lambda r: r not in right)):
            views = [r for r in fed if keep(r)]
            if views:
                print(f"  {label:18s} {len(views):4d} views   pipeline {100 * summary(views)['hue']:5.1f}%")
    if upright_rows:
        s = summary(upright_rows)
        print(f"{'upright oracle':29s}{s['ab_l1']:7.2f} {100 * s['hue']:6.1f}% {100 * s['colourful']:8.0f}% "
              f"{100 * s['blob_worst']:9.2f}% {s['blob_over_1pct']:7d}   (each view coloured turned upright)")
    for g in gains:
        s = summary(gain_rows[g])
        print(f"{'  chroma x ' + str(g):28s} {s['ab_l1']:7.2f} {100 * s['hue']:6.1f}% {100 * s['colourful']:8.0f}% "
              f"{100 * s['blob_worst']:9.2f}% {s['blob_over_1pct']:7d}")
    if args.json:
        json.dump({"pipeline": pipe, "clean": clean, "clean_print": clean_prints, "per_photo": pipe_rows,
                   "unmatched": unmatched, "per_photo_clean": clean_rows, "per_view_clean_print": clean_print_rows,
                   "args": vars(args)}, open(args.json, "w"), indent=1)
    if args.sheet and tiles:
        tiles.sort(key=lambda x: x[0])
        rows = [t[1].copy() for t in tiles[:30]]
        for (h, tile, pid), row in zip(tiles, rows):
            cv2.putText(row, f"{pid} hue {100 * h:.0f}%", (4, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1)
        pairs = [np.hstack(rows[k:k + 2]) if k + 1 < len(rows) else np.hstack([rows[k], np.zeros_like(rows[k])])
                 for k in range(0, len(rows), 2)]
        cv2.imwrite(args.sheet, np.vstack(pairs)[..., ::-1])


if __name__ == "__main__":
    main()
