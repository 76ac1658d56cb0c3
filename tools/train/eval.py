"""Held-out evaluation of a checkpoint's two heads against the grey and sepia baselines, plus the before/after sheet.

    python3 tools/train/eval.py --checkpoint /work/data/color/run1/last.pt --work /work/data/color \
        --metrics tools/train/metrics.json --sheet tools/train/sheet.png

Every method sees the same held-out photos (split.json "heldout", longer side <= 512 px) through the same
pipeline as `colorcam colorize` (pipeline.py: L -> 256x256 -> model -> ab -> image size):
  ab L1        mean |a - a*| and |b - b*| over all pixels (Lab units)
  RGB PSNR     on sRGB 0..1 after Lab -> RGB, dB, averaged over photos
  colourfulness  Hasler & Süsstrunk M (8-bit RGB) of the result / M of the ground truth, summed over photos
  hue agreement  share of pixels with ground-truth chroma > 10 whose predicted chroma > 5 and hue within 30 deg
Baselines: grey (ab = 0) and sepia (the training set's mean ab everywhere, from the run's stats.json).
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image, ImageDraw

from colour_metrics import colourfulness, hue_counts
from labcolor import lab2rgb
from model import ColorNet, net_width
from model import model_input as net_input
from pipeline import combine, model_input

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--metrics", default=os.path.join(HERE, "metrics.json"))
    ap.add_argument("--sheet", default=os.path.join(HERE, "sheet.png"))
    ap.add_argument("--temperature", type=float, default=0.38)
    args = ap.parse_args()
    torch.set_num_threads(1)
    split = json.load(open(os.path.join(HERE, "split.json")))
    cache = np.load(os.path.join(args.work, "cache.npz"))
    state = torch.load(args.checkpoint, map_location="cpu")
    net = ColorNet(width=net_width(state))
    net.load_state_dict(state["model"])
    net.eval()
    stats = json.load(open(os.path.join(os.path.dirname(args.checkpoint), "stats.json")))
    mean_ab = np.array(stats["mean_ab"])

    def run_heads(L256):
        with torch.no_grad():
            L = torch.from_numpy(L256.astype(np.float32))[None, None]
            reg, logits = net(net_input(L, torch.zeros(1, 2, *L.shape[2:]), torch.zeros_like(L)))
            reg = F.interpolate(reg, scale_factor=2, mode="bilinear", align_corners=False)
            cls = F.interpolate(net.decode_annealed(logits, args.temperature), scale_factor=4, mode="bilinear",
                                align_corners=False)
        return {"regression": reg[0].numpy().transpose(1, 2, 0), "classification": cls[0].numpy().transpose(1, 2, 0)}

    methods = ["regression", "classification", "grey", "sepia"]
    acc = {m: {"l1": 0.0, "px": 0, "psnr": [], "cf": 0.0, "hue_ok": 0, "hue_n": 0} for m in methods}
    cf_gt = 0.0
    demo_ids = [d["id"] for d in split["demo"]]
    demo_rows = {}
    for pid in split["heldout"]:
        lab = cache[pid].astype(np.float64)
        L, ab_gt = lab[..., 0], lab[..., 1:]
        rgb_gt = lab2rgb(lab)
        cf_gt += colourfulness(rgb_gt)
        heads = run_heads(model_input(L))
        preds = {m: combine(L, heads[m])[..., 1:] for m in ("regression", "classification")}
        preds["grey"] = np.zeros_like(ab_gt)
        preds["sepia"] = np.broadcast_to(mean_ab, ab_gt.shape)
        for m in methods:
            pred_lab = np.concatenate([L[..., None], preds[m]], -1)
            rgb = lab2rgb(pred_lab)
            a = acc[m]
            a["l1"] += np.abs(preds[m] - ab_gt).mean() * L.size
            a["px"] += L.size
            mse = ((rgb - rgb_gt) ** 2).mean()
            a["psnr"].append(10 * np.log10(1.0 / max(mse, 1e-12)))
            a["cf"] += colourfulness(rgb)
            ok, n = hue_counts(preds[m], ab_gt)
            a["hue_ok"] += ok
            a["hue_n"] += n
            if pid in demo_ids:
                demo_rows.setdefault(pid, {})[m] = rgb
        if pid in demo_ids:
            demo_rows[pid]["truth"] = rgb_gt
    results = {}
    for m in methods:
        a = acc[m]
        results[m] = {"ab_l1": round(a["l1"] / a["px"], 3), "rgb_psnr_db": round(float(np.mean(a["psnr"])), 2),
                      "colourfulness_fraction": round(a["cf"] / cf_gt, 3),
                      "hue_agreement": round(a["hue_ok"] / max(1, a["hue_n"]), 4)}
    # Reporting only: the exported decode is chosen on training photos through the product (pipeline_eval.py
    # --split train), never on these held-out figures.
    out = {"heldout_photos": len(split["heldout"]), "checkpoint_step": state.get("step"),
           "training_minutes": round(state.get("used_s", 0) / 60, 1), "annealed_mean_temperature": args.temperature,
           "methods": results, "input": "clean photos' L (colorize --whole path), no hints"}
    json.dump(out, open(args.metrics, "w"), indent=1)
    print(json.dumps(out, indent=1))
    # before/after sheet: grey input | regression | classification | ground truth
    tile_w, cols = 200, ["grey", "regression", "classification", "truth"]
    tiles = []
    for pid in demo_ids:
        row = demo_rows.get(pid)
        if row is None:
            continue
        ims = []
        for c in cols:
            im = Image.fromarray((np.clip(row[c], 0, 1) * 255).round().astype(np.uint8))
            im = im.resize((tile_w, max(1, round(im.height * tile_w / im.width))), Image.LANCZOS)
            ims.append(im)
        tiles.append(ims)
    if tiles:
        heights = [max(i.height for i in ims) for ims in tiles]
        sheet = Image.new("RGB", (len(cols) * (tile_w + 4), sum(h + 4 for h in heights) + 18), "white")
        d = ImageDraw.Draw(sheet)
        for k, c in enumerate(["input (L only)", "regression head", "classification head", "original"]):
            d.text((k * (tile_w + 4) + 4, 3), c, fill="black")
        y = 18
        for ims, h in zip(tiles, heights):
            for k, im in enumerate(ims):
                sheet.paste(im, (k * (tile_w + 4), y))
            y += h + 4
        sheet.save(args.sheet, optimize=True)
        print(f"sheet {args.sheet}: {len(tiles)} held-out photos")


if __name__ == "__main__":
    main()
