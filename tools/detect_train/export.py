#!/usr/bin/env python3
"""Exports a trained PrintNet checkpoint as the detect bundle: model.onnx (opset 17, dynamic H × W) + manifest.json.

  export.py --checkpoint .build/dr/run/ckpt.pt --out Models/detect-default [--scores FILE.json] [--command "…"]

The export is checked against PyTorch with onnxruntime on a 120 × 160 and a 120 × 216 input (max abs difference of
the probabilities and of the corner offsets, printed and stored in the manifest).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import from_state  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scores", default=None, help="JSON of held-out figures to put in the manifest")
    ap.add_argument("--training", default=None, help="train_log.json of the run")
    ap.add_argument("--data", default=None, help="JSON describing the training data (packs, seeds, counts)")
    ap.add_argument("--maps-only", action="store_true",
                    help="leave the corner head out: the two-map model (the corner loss still shaped the trunk)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    state = torch.load(args.checkpoint, map_location="cpu")
    weights = state["model"]
    if args.maps_only:
        weights = {k: v for k, v in weights.items() if not k.startswith("corner_head.")}
    net = from_state(weights)
    net.eval()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "model.onnx")
    example = torch.rand(1, 3, 120, 160) - 0.5
    torch.onnx.export(net, (example,), path + ".partial", opset_version=17, input_names=["frame"],
                      output_names=["maps"], dynamic_axes={"frame": {2: "h", 3: "w"}, "maps": {2: "h", 3: "w"}},
                      do_constant_folding=True, dynamo=False)
    os.replace(path + ".partial", path)
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    diff, corner_diff = 0.0, 0.0
    for shape in ((1, 3, 120, 160), (1, 3, 120, 216)):
        x = torch.rand(*shape) - 0.5
        with torch.no_grad():
            ref = net(x).numpy()
        got = sess.run(None, {"frame": x.numpy()})[0]
        diff = max(diff, float(np.abs(ref[:, :2] - got[:, :2]).max()))
        corner_diff = max(corner_diff, float(np.abs(ref[:, 2:] - got[:, 2:]).max()) if ref.shape[1] > 2 else 0.0)
    print(f"onnxruntime vs torch: max |p| diff {diff:.2e}, max |corner offset| diff {corner_diff:.2e} cells")
    manifest = {
        "name": os.path.basename(os.path.normpath(args.out)),
        "kind": "detect-segmenter",
        "format": "onnx", "opset": 17, "file": "model.onnx",
        "input": "frame", "output": "maps", "multiple": 8, "cell_px_per_coarse_factor": 2,
        "input_description": ("[1,3,H,W]: Y/255-0.5, (Cb-128)/128, (Cr-128)/128 — BT.601 full-range means over each "
                              "cell of 2 x the detector's coarse factor px (4 px at 640x480); H, W multiples of 8, "
                              "padded by replicating the last row/column"),
        "output_description": ("[1,10,H,W]: 0 print interior probability (amodal under hands), 1 visible paper edge "
                               "probability, 2-9 the corners of the print the cell lies in (x0,y0,...,x3,y3: offsets "
                               "in cells from the cell's centre, clockwise on screen, any corner first, amodal)"
                               if net.corner_head is not None else
                               "[1,2,H,W]: 0 print interior probability (amodal under hands), 1 visible paper edge "
                               "probability"),
        "architecture": ("U-Net 16-24-32-48 on the grid, 3 poolings, dilated 1/8 context, nearest upsampling; "
                         f"corner head: {net.corner_head[0].kernel_size[0]}x{net.corner_head[0].kernel_size[0]} conv "
                         "over the top features and the 1/4 decoder's (upsampled), 32 channels, 1x1 to 8"
                         if net.corner_head is not None else ""),
        "parameters": int(sum(p.numel() for p in net.parameters())),
        "training": json.load(open(args.training)) if args.training else {"steps": state.get("step")},
        "data": json.load(open(args.data)) if args.data else None,
        "export_check": {"onnxruntime_vs_torch_max_abs": diff, "corner_offsets_max_abs_cells": corner_diff},
        "scores": json.load(open(args.scores)) if args.scores else None,
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as out:
        json.dump(manifest, out, indent=1)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.2f} MB) and manifest.json")


if __name__ == "__main__":
    main()
