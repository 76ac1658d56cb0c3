"""Export a trained checkpoint to ONNX (opset 17) plus manifest.json: the colorcam model bundle.

    python3 tools/train/export.py --checkpoint /work/data/color/run1/last.pt --head regression \
        --metrics tools/train/metrics.json --out Models/colorcam-default

The ONNX graph takes raw L (1x1x256x256, 0..100; the 0.02 L - 1 normalisation is inside the graph, and stated in
the manifest) and returns ab (1x2x256x256) at full resolution. Two optional inputs carry colour hints: `hint_ab`
(1x2x256x256, ab units) and `hint_mask` (1x1x256x256, 1 where a hint is given); each also has an all-zero
initialiser, so a runtime that feeds only L runs the model without hints (ONNX: an input with an initialiser is
optional). The export is checked against PyTorch with onnxruntime, without and with hints (max |ab| differences
printed and stored in the manifest).
"""
import argparse
import csv
import json
import os

import numpy as np
import torch

from model import ColorNet, ExportWrapper, net_width

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 256


def load_net(checkpoint):
    state = torch.load(checkpoint, map_location="cpu")
    net = ColorNet(width=net_width(state))
    net.load_state_dict(state["model"])
    net.eval()
    return net, state


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--head", choices=["regression", "classification", "mixed"], required=True)
    ap.add_argument("--mix", type=float, default=0.5, help="mixed head: weight of the classification decode")
    ap.add_argument("--temperature", type=float, default=0.38)
    ap.add_argument("--metrics", default=os.path.join(HERE, "metrics.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "Models", "colorcam-default"))
    ap.add_argument("--version", default="1.0.0")
    args = ap.parse_args()
    torch.set_num_threads(1)
    net, state = load_net(args.checkpoint)
    wrapper = ExportWrapper(net, args.head, args.temperature, args.mix).eval()
    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, "model.onnx")
    example = torch.rand(1, 1, SIZE, SIZE) * 100
    no_ab, no_mask = torch.zeros(1, 2, SIZE, SIZE), torch.zeros(1, 1, SIZE, SIZE)
    torch.onnx.export(wrapper, (example, no_ab, no_mask), onnx_path, opset_version=17,
                      input_names=["L", "hint_ab", "hint_mask"], output_names=["ab"], do_constant_folding=True,
                      dynamo=False)
    import onnx
    from onnx import numpy_helper
    graph_model = onnx.load(onnx_path)
    for name, t in (("hint_ab", no_ab), ("hint_mask", no_mask)):
        graph_model.graph.initializer.append(numpy_helper.from_array(t.numpy(), name))
    onnx.save(graph_model, onnx_path)
    import onnxruntime as ort
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    with torch.no_grad():
        ref = wrapper(example, no_ab, no_mask).numpy()
        hint_ab = torch.zeros(1, 2, SIZE, SIZE)
        hint_mask = torch.zeros(1, 1, SIZE, SIZE)
        hint_ab[:, :, 100:110, 60:70] = torch.tensor([40.0, 30.0]).view(1, 2, 1, 1)
        hint_mask[:, :, 100:110, 60:70] = 1
        ref_hint = wrapper(example, hint_ab, hint_mask).numpy()
    got = sess.run(None, {"L": example.numpy()})[0]
    diff = float(np.abs(ref - got).max())
    got_hint = sess.run(None, {"L": example.numpy(), "hint_ab": hint_ab.numpy(), "hint_mask": hint_mask.numpy()})[0]
    diff_hint = float(np.abs(ref_hint - got_hint).max())
    print(f"onnxruntime vs torch: max |ab| diff {diff:.2e} without hints, {diff_hint:.2e} with a hint")
    sources = {}
    for row in csv.DictReader(open(os.path.join(HERE, "sources.csv"))):
        s = sources.setdefault(row["package"], {"package": row["package"], "licence": row["licence"],
                                                "photos_train": 0, "photos_heldout": 0})
        s["photos_" + row["split"]] += 1
    sources["tuxpaint-stamps-default"] = {"package": "tuxpaint-stamps-default", "licence": "GPL-2+",
                                          "use": "cut-outs pasted on training crops", "photos_train": 0,
                                          "photos_heldout": 0}
    metrics = json.load(open(args.metrics)) if os.path.exists(args.metrics) else {}
    manifest = {
        "name": "colorcam-default",
        "version": args.version,
        "format": "onnx",
        "opset": 17,
        "file": "model.onnx",
        "input": {"name": "L", "shape": [1, 1, SIZE, SIZE], "colour_space": "CIE Lab (sRGB, D65, skimage constants)",
                  "channel": "L", "range": [0, 100],
                  "normalisation": "none outside the graph: the graph computes x = 0.02 * L - 1 itself",
                  "scale": 1.0, "offset": 0.0,
                  "resize": "bilinear (half-pixel centres) of the image's L to 256x256"},
        "output": {"name": "ab", "shape": [1, 2, SIZE, SIZE], "channels": ["a", "b"], "scale": 1.0,
                   "decoding": {
                       "regression": "tanh * 110 regression at 1/2 resolution, bilinear x2 in the graph",
                       "classification": f"313-bin-style classification ({net.bins.shape[0]} in-gamut bins of 10), "
                                         f"annealed mean T={args.temperature} as softmax + 1x1 conv, bilinear x4 in "
                                         f"the graph",
                       "mixed": f"{args.mix} x the classification head's annealed mean (T={args.temperature}, "
                                f"{net.bins.shape[0]} in-gamut bins of 10, bilinear x4) + {1 - args.mix:g} x the "
                                f"regression head (tanh * 110, bilinear x2), in the graph"}[args.head],
                   "resize": "bilinear (half-pixel centres) back to the image size, then combined with the "
                             "image's own full-resolution L"},
        "hints": {"inputs": [{"name": "hint_ab", "shape": [1, 2, SIZE, SIZE], "unit": "ab"},
                             {"name": "hint_mask", "shape": [1, 1, SIZE, SIZE], "unit": "1 where a hint is given"}],
                  "default": "all zeros (initialisers in the graph): no hints",
                  "training": "simulated user points (Zhang, Zhu et al. 2017): geometric count p = 1/8, none in half "
                              "the samples, centre-biased, 1-9 px patches of the target's mean ab"},
        "head": args.head,
        "temperature": args.temperature if args.head != "regression" else None,
        "mix": args.mix if args.head == "mixed" else None,
        "architecture": (f"U-Net {'-'.join(str(c.out_channels) for c in (net.e1[0], net.e2[0][0], net.e3[0][0], net.e4[0][0]))}"
                         f" (width {net.width:g}), encoder to 1/16 with dilated bottleneck, additive skips; input L, "
                         f"hint ab and hint mask concatenated"),
        "parameters": int(sum(p.numel() for p in wrapper.parameters())),
        "training": {"steps": state.get("step"), "minutes": round(state.get("used_s", 0) / 60, 1),
                     "args": state.get("args"), "command": "see tools/train/README.md"},
        "export_check": {"onnxruntime_vs_torch_max_abs_ab": diff, "with_a_hint": diff_hint},
        "data_sources": sorted(sources.values(), key=lambda s: s["package"]),
        "licence_note": ("Weights trained on GPL-2+/GPL-3+, CC-BY(-SA) and BSD images: see tools/train/sources.csv "
                         "for the per-photo list; the licence status of trained weights is not settled."),
        "metrics": metrics,
    }
    if args.head != "regression":  # the picker's suggestions (tools/train/manifest_distribution.py)
        from manifest_distribution import describe
        manifest["distribution"] = describe(onnx_path)
    json.dump(manifest, open(os.path.join(args.out, "manifest.json"), "w"), indent=1)
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path) / 1e6:.2f} MB) and manifest.json")


if __name__ == "__main__":
    main()
