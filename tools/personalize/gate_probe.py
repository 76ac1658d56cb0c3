#!/usr/bin/env python3
"""Can the colorizer's own features tell a user's theme from everything else? (issue #27, a study)

    python3 tools/personalize/gate_probe.py --inner /tmp/in-C [--model Models/colorcam-default/model.onnx]

A personalized bundle could keep the base model's colours on every picture that is not like the user's by blending
the base and the personalized output with a gate: a linear classifier on pooled features of the frozen trunk, fitted
on the user's training photos (1) against the rehearsal photos (0). This measures how well such a gate separates,
before anything is built: fitted on the clean photos of a theme's inner training split (`theme_eval.py --inner`
wrote them under INNER/inner/THEME/train) against Models/colorcam-default/rehearsal, and scored on the prints the
product saw in that run (INNER/THEME-base/*/clean-print-*-in.png: the theme's inner validation photos) against the
general set's (INNER/general-base/...). Training side only: no held-out photo is read.
Features: per-channel mean and standard deviation over the image of one or more of the trunk's activations.
Prints AUC and the mean gate on each side, per theme and feature set. onnxruntime is the engine here (a study,
not the product).
"""
import argparse
import glob
import os

import numpy as np
import onnx
import onnxruntime as ort
from PIL import Image
from skimage.color import rgb2lab
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = {"e3": "/e3/e3.1/e3.1.2/Relu_output_0", "e4 (bottleneck)": "/e4/e4.2/e4.2.2/Relu_output_0",
          "d2": "/d2/d2.2/Relu_output_0", "ab distribution": "/Softmax_output_0"}
SETS = [["e3"], ["e4 (bottleneck)"], ["d2"], ["ab distribution"], ["e3", "e4 (bottleneck)", "d2"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inner", required=True, help="a theme_eval.py --inner --out folder")
    ap.add_argument("--model", default=os.path.join(ROOT, "Models/colorcam-default/model.onnx"))
    ap.add_argument("--rehearsal", default=os.path.join(ROOT, "Models/colorcam-default/rehearsal"))
    ap.add_argument("--themes", default="sky_water,green,buildings")
    ap.add_argument("--c", type=float, default=0.05, help="logistic regression's inverse L2 strength")
    args = ap.parse_args()
    m = onnx.load(args.model)
    for name in LAYERS.values():
        m.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    session = ort.InferenceSession(m.SerializeToString(), so)
    cache = {}

    def features(path):
        if path not in cache:
            im = Image.open(path).convert("RGB").resize((256, 256), Image.BILINEAR)
            lum = rgb2lab(np.asarray(im) / 255.0)[..., 0].astype(np.float32)
            outs = session.run(list(LAYERS.values()), {"L": lum[None, None]})
            cache[path] = {k: np.concatenate([o[0].mean((1, 2)), o[0].std((1, 2))]) for k, o in zip(LAYERS, outs)}
        return cache[path]

    def table(paths, chosen):
        return np.array([np.concatenate([features(p)[k] for k in chosen]) for p in paths])

    def need(paths, what):
        if not paths:
            raise SystemExit(f"gate_probe: no {what} (run theme_eval.py --inner --out {args.inner} first)")
        return paths

    negatives = need(sorted(glob.glob(os.path.join(args.rehearsal, "*.jpg")) +
                            glob.glob(os.path.join(args.rehearsal, "*.png"))), "rehearsal photos")
    general = need(sorted(glob.glob(os.path.join(args.inner, "general-base/*/clean-print-*-in.png"))), "general prints")
    print(f"{'theme':10s} {'features':32s} {'AUC':>6s} {'gate: theme':>12s} {'general':>8s} {'general > 0.5':>14s}")
    for theme in args.themes.split(","):
        positives = need(sorted(glob.glob(os.path.join(args.inner, "inner", theme, "train", "*"))), f"{theme} photos")
        tests = need(sorted(glob.glob(os.path.join(args.inner, f"{theme}-base/*/clean-print-*-in.png"))),
                     f"{theme} prints")
        for chosen in SETS:
            x = np.vstack([table(positives, chosen), table(negatives, chosen)])
            y = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
            scaler = StandardScaler().fit(x)
            clf = LogisticRegression(C=args.c, max_iter=5000, class_weight="balanced").fit(scaler.transform(x), y)
            gp = clf.predict_proba(scaler.transform(table(tests, chosen)))[:, 1]
            gn = clf.predict_proba(scaler.transform(table(general, chosen)))[:, 1]
            auc = roc_auc_score(np.r_[np.ones(len(gp)), np.zeros(len(gn))], np.r_[gp, gn])
            print(f"{theme:10s} {' + '.join(chosen):32s} {auc:6.3f} {gp.mean():12.2f} {gn.mean():8.2f} "
                  f"{(gn > 0.5).mean():13.0%}")
    print(f"fitted on {len(negatives)} rehearsal photos (0) and each theme's inner training photos (1); scored on "
          f"{len(general)} general prints and each theme's inner validation prints, as the product saw them")


if __name__ == "__main__":
    main()
