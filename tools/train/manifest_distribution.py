#!/usr/bin/env python3
"""Declares a colorizer bundle's ab distribution in its manifest (`distribution`), for colorcam's hint picker.

    python3 tools/train/manifest_distribution.py Models/colorcam-default

The graph's classification head computes, per cell of a 1/4-resolution grid, an annealed softmax over in-gamut ab
bins, decoded by a 1x1 Conv whose weight [2, Q, 1, 1] holds the bins' ab. This finds that Softmax (the one feeding
such a Conv), its shape (onnx shape inference) and the bins, and writes them into manifest.json:
`"distribution": {"tensor", "shape": [1, Q, H, W], "bins_ab": [[a, b] x Q], "meaning"}`. export.py calls
`describe` for classification and mixed heads; this command adds it to a bundle exported before.
"""
import json
import os
import sys

import onnx
from onnx import numpy_helper, shape_inference


def describe(model_path):
    """The manifest's `distribution` entry for the ONNX file at model_path; None when the graph has no such head."""
    model = shape_inference.infer_shapes(onnx.load(model_path))
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in graph.value_info}
    for node in graph.node:
        if node.op_type != "Softmax":
            continue
        for user in graph.node:
            if user.op_type == "Conv" and user.input[0] == node.output[0] and user.input[1] in weights:
                w = weights[user.input[1]]
                if w.ndim == 4 and w.shape[0] == 2 and w.shape[2:] == (1, 1) and len(user.input) < 3:
                    shape = shapes.get(node.output[0])
                    if not shape or len(shape) != 4 or shape[1] != w.shape[1]:
                        continue
                    return {"tensor": node.output[0], "shape": shape,
                            "bins_ab": [[float(w[0, q, 0, 0]), float(w[1, q, 0, 0])] for q in range(w.shape[1])],
                            "meaning": "the classification head's annealed softmax over in-gamut ab bins, per cell of "
                                       "the grid: how likely the model finds each bin's ab there (the picker's "
                                       "suggested colours)"}
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1].strip())
    bundle = sys.argv[1]
    path = os.path.join(bundle, "manifest.json")
    manifest = json.load(open(path))
    entry = describe(os.path.join(bundle, manifest.get("file", "model.onnx")))
    if entry is None:
        sys.exit(f"{bundle}: the graph has no Softmax decoded by a 1x1 Conv to ab: no distribution to declare")
    manifest["distribution"] = entry
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, path)
    print(f"{path}: distribution {entry['tensor']} {entry['shape']}")


if __name__ == "__main__":
    main()
