"""Which way is up: an orientation head on the colorizer's own encoder, fitted on the CPU and added to its graph.

A print lying on a table has no up that the detector can see. The product rectifies it with its corners clockwise from
the one nearest the frame's top left, so a print turned more than 45 degrees is fed to the colorizer turned, and a
model trained on upright pictures paints a turned landscape's sky as grass (tools/profile/results/
colour-camera-path-2026-12-06.txt: unseen photos' views fed turned 27.5 % hue agreement, fed upright 43.0 %).

The head: the colorizer's bottleneck (the encoder's last ReLU, 192 x 16 x 16 at 256^2) averaged over 4 x 4 blocks
(3072 values), standardised, and a 4-class logistic regression: "this picture is its upright picture turned k quarter
turns counterclockwise" (NumPy's rot90), k = 0..3. Training pictures: print-like crops of the colour training photos
(tools/train/split.json "train"; never the held-out or demo photos): the print's aspect (2:3, 3:4, 1:1, 5:7, either
way), 35-100 % of the photo, mirrored half the time, shrunk to the size a print has in the camera frame (50-260 px along
its long side) and sampled back up to the model's input, blurred, its tones squeezed and bent, a lighting gradient,
sensor noise; each crop turned four ways. The product asks the head about a view turned four ways and lets the four
answers vote with a prior (`UprightVote`): `prior_upright` is how often the scene generator's prints are fed upright
(its print angle and camera roll distributions, tools/scenes/dr_render.py: 0.51 by Monte Carlo, below).

    python3 tools/train/upright.py --model Models/colorcam-default --out OUT [--crops 16] [--C 0.01] [--seed 3]

OUT is a copy of the bundle whose model.onnx has the head's four nodes added (AveragePool, Flatten, Gemm, Softmax; the
ab output is untouched), tapped as `turn_probs`, and whose manifest gains an `orientation` section (the data, the
command, the training figures). The head's probabilities from onnxruntime are checked against the fitted head's.
Features take ~9 minutes for 16 crops of 240 photos on 2 cores; `--features FILE` keeps them for a rerun, with a key
of the colorizer's weights (less any head), the photos, --crops and --seed: features of another model are refused, so
a retrained colorizer gets its head refitted on its own bottleneck.
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BOTTLENECK = "/e4/e4.2/e4.2.2/Relu_output_0"
TAP = "turn_probs"
ASPECTS = (2 / 3, 3 / 4, 1.0, 5 / 7)


def prior_upright(rng, n=1_000_000):
    """How often a print is fed upright: the scene generator's print angle (half uniform, half within 0.3 rad of
    upright) plus its camera roll (30 % uniform, else within 12 degrees), upright when within 45 degrees."""
    angle = np.where(rng.random(n) < 0.5, rng.uniform(0, 2 * np.pi, n), rng.uniform(-0.3, 0.3, n))
    roll = np.radians(np.where(rng.random(n) < 0.3, rng.uniform(-180, 180, n), rng.uniform(-12, 12, n)))
    phi = np.degrees(angle + roll) % 360
    return float(((phi < 45) | (phi > 315)).mean())


class Encoder:
    """The bundle's graph run by onnxruntime up to its bottleneck (hint inputs at their zero defaults)."""

    def __init__(self, model_path, side, threads):
        import onnx
        import onnxruntime as ort
        m = onnx.load(model_path)
        m.graph.output.append(onnx.helper.make_tensor_value_info(BOTTLENECK, onnx.TensorProto.FLOAT, None))
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.log_severity_level = 3
        self.session = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        self.side = side

    def features(self, L):
        """The head's 3072 inputs for one picture's L (0-100, any size; resized bilinearly like the product)."""
        x = cv2.resize(L.astype(np.float32), (self.side, self.side), interpolation=cv2.INTER_LINEAR)
        f = self.session.run([BOTTLENECK], {"L": x[None, None]})[0][0]
        c, h, w = f.shape
        return f.reshape(c, 4, h // 4, 4, w // 4).mean(axis=(2, 4)).ravel()


def print_like(rng, L):
    """A print-like crop of a photo's L as the camera would show it (see the module's doc)."""
    h, w = L.shape
    aspect = ASPECTS[rng.integers(len(ASPECTS))]
    aspect = aspect if rng.random() < 0.5 else 1 / aspect
    area = rng.uniform(0.35, 1.0)
    ch = int(min(h, math.sqrt(area * h * w / aspect)))
    cw = int(min(w, ch * aspect))
    ch = int(min(ch, cw / aspect))
    y0, x0 = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
    c = L[y0:y0 + ch, x0:x0 + cw]
    if rng.random() < 0.5:
        c = c[:, ::-1]
    c = np.ascontiguousarray(c, np.float32)
    s = rng.uniform(50, 260) / max(c.shape)
    if s < 1:
        c = cv2.resize(c, (max(8, int(c.shape[1] * s)), max(8, int(c.shape[0] * s))), interpolation=cv2.INTER_AREA)
    if rng.random() < 0.5:
        c = cv2.GaussianBlur(c, (0, 0), rng.uniform(0.3, 1.2))
    lo, hi = rng.uniform(0, 35), rng.uniform(65, 100)
    c = lo + c / 100 * (hi - lo)
    c = 100 * (np.clip(c, 0, 100) / 100) ** rng.uniform(0.7, 1.4)
    hh, ww = c.shape
    yy, xx = np.mgrid[0:hh, 0:ww]
    a = rng.uniform(0, 2 * np.pi)
    c = c + (np.cos(a) * (xx / ww - 0.5) + np.sin(a) * (yy / hh - 0.5)) * rng.uniform(0, 25)
    c = c + rng.normal(0, rng.uniform(0, 4), c.shape)
    return np.clip(c, 0, 100).astype(np.float32)


def training_features(encoder, photos, crops, seed):
    """(X, y, photo index) for `crops` print-like crops of each photo, each turned 0-3 quarter turns."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    start = time.time()
    for i, L in enumerate(photos):
        for _ in range(crops):
            c = print_like(rng, L)
            for k in range(4):
                X.append(encoder.features(np.rot90(c, k)))
                y.append(k)
                g.append(i)
        if i % 20 == 19 or i == len(photos) - 1:
            print(f"features: {i + 1}/{len(photos)} photos, {time.time() - start:.0f} s", flush=True)
    return np.array(X, np.float32), np.array(y), np.array(g)


def features_key(model_path, photo_ids, crops, seed):
    """What cached features were computed from: the colorizer's own weights (any earlier head left out, so the bundle
    with its head gives the key of the bundle without), the photos, the crops and the seed."""
    import hashlib
    import onnx
    h = hashlib.sha256()
    for t in sorted(onnx.load(model_path).graph.initializer, key=lambda t: t.name):
        if not t.name.startswith("upright."):
            h.update(t.name.encode())
            h.update(t.SerializeToString())
    h.update(json.dumps([list(photo_ids), crops, seed]).encode())
    return h.hexdigest()


def vote(probs, prior):
    """The product's vote (`UprightVote`): probs[j] = the head's answer for the view turned j; the view is its
    upright picture turned argmax_c sum_j log probs[j][(c + j) % 4] + log prior[c]."""
    s = np.log(prior) + np.array([sum(math.log(max(probs[j][(c + j) % 4], 1e-12)) for j in range(4))
                                  for c in range(4)])
    return int(np.argmax(s))


def add_head(model_path, out_path, weight, bias):
    """Writes the bundle's graph with the head's nodes added after the bottleneck, `turn_probs` [1, 4]."""
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(model_path)
    g = m.graph
    # An earlier head is replaced (the bundle may already have one).
    for n in [n for n in g.node if n.name.startswith("upright.")]:
        g.node.remove(n)
    for t in [t for t in g.initializer if t.name.startswith("upright.")]:
        g.initializer.remove(t)
    g.initializer.extend([numpy_helper.from_array(weight.astype(np.float32), "upright.weight"),
                          numpy_helper.from_array(bias.astype(np.float32), "upright.bias")])
    g.node.extend([
        helper.make_node("AveragePool", [BOTTLENECK], ["upright.pool"], name="upright.pool", kernel_shape=[4, 4],
                         strides=[4, 4]),
        helper.make_node("Flatten", ["upright.pool"], ["upright.features"], name="upright.flatten", axis=1),
        helper.make_node("Gemm", ["upright.features", "upright.weight", "upright.bias"], ["upright.logits"],
                         name="upright.gemm", transB=1),
        helper.make_node("Softmax", ["upright.logits"], [TAP], name="upright.softmax", axis=1),
    ])
    onnx.checker.check_model(m)
    onnx.save(m, out_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "Models", "colorcam-default"), help="colorizer bundle")
    ap.add_argument("--out", required=True, help="bundle directory to write (a copy of --model with the head)")
    ap.add_argument("--work", default="/work/data/color", help="colour data (collect.py / build_dataset.py's cache)")
    ap.add_argument("--crops", type=int, default=16, help="print-like crops per training photo")
    ap.add_argument("--C", type=float, default=0.01, help="the logistic regression's inverse regularisation")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--features", help="keep the training features in this .npz (read it when it exists)")
    args = ap.parse_args()
    from sklearn.linear_model import LogisticRegression

    manifest_path = os.path.join(args.model, "manifest.json")
    if not os.path.exists(manifest_path):
        sys.exit(f"{manifest_path}: no such file (--model must be a colorizer bundle)")
    manifest = json.load(open(manifest_path))
    model_path = os.path.join(args.model, manifest["file"])
    cache_path = os.path.join(args.work, "cache.npz")
    if not os.path.exists(cache_path):
        sys.exit(f"{cache_path}: no such file (run tools/train/collect.py and build_dataset.py first)")
    split = json.load(open(os.path.join(HERE, "split.json")))
    key = features_key(model_path, split["train"], args.crops, args.seed)
    if args.features and os.path.exists(args.features):
        d = np.load(args.features)
        if "key" not in d or str(d["key"]) != key:
            sys.exit(f"{args.features}: features of another colorizer, photo list, --crops or --seed than this run's "
                     f"(a head fitted on them would be wrong); delete the file or name another --features")
        X, y, g = d["X"], d["y"], d["g"]
    else:
        cache = np.load(cache_path)
        photos = [cache[pid][..., 0].astype(np.float32) for pid in split["train"]]
        encoder = Encoder(model_path, manifest["input"]["shape"][2], args.threads)
        X, y, g = training_features(encoder, photos, args.crops, args.seed)
        if args.features:
            np.savez(args.features + ".partial.npz", X=X, y=y, g=g, key=np.str_(key))
            os.replace(args.features + ".partial.npz", args.features)
    mu, sd = X.mean(0), X.std(0) + 1e-6
    clf = LogisticRegression(C=args.C, max_iter=3000).fit((X - mu) / sd, y)
    train_acc = float((clf.predict((X - mu) / sd) == y).mean())
    # Grouped by photo: a fair figure of the head on photos it did not fit (no choice is made on it).
    folds = np.arange(len(set(g.tolist()))) % 4
    cv = []
    for f in range(4):
        tr, te = folds[g] != f, folds[g] == f
        m = LogisticRegression(C=args.C, max_iter=3000).fit((X[tr] - mu) / sd, y[tr])
        cv.append(float((m.predict((X[te] - mu) / sd) == y[te]).mean()))
    print(f"head: training accuracy {train_acc:.3f}, 4-fold by photo {np.mean(cv):.3f} (one picture, 4 classes)")

    weight = clf.coef_ / sd
    bias = clf.intercept_ - weight @ mu
    os.makedirs(args.out, exist_ok=True)
    same = os.path.samefile(args.model, args.out)
    for name in [] if same else os.listdir(args.model):
        src, dst = os.path.join(args.model, name), os.path.join(args.out, name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True)
        elif name not in (manifest["file"], "manifest.json"):
            shutil.copy2(src, dst)
    out_model = os.path.join(args.out, manifest["file"])
    add_head(model_path, out_model + ".partial", weight, bias)

    # onnxruntime on the written graph against the fitted head, on print-like pictures of the first photos.
    import onnx
    import onnxruntime as ort
    m = onnx.load(out_model + ".partial")
    m.graph.output.append(onnx.helper.make_tensor_value_info(TAP, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    side = manifest["input"]["shape"][2]
    rng = np.random.default_rng(args.seed + 1)
    cache = np.load(cache_path)
    enc = Encoder(model_path, side, args.threads)
    worst = 0.0
    for pid in split["train"][:8]:
        c = print_like(rng, cache[pid][..., 0].astype(np.float32))
        x = cv2.resize(c, (side, side), interpolation=cv2.INTER_LINEAR)
        got = sess.run([TAP], {"L": x[None, None]})[0][0]
        want = clf.predict_proba(((enc.features(c) - mu) / sd)[None])[0]
        worst = max(worst, float(np.abs(got - want).max()))
    if worst > 1e-4:
        os.remove(out_model + ".partial")
        sys.exit(f"{out_model}: the graph's head differs from the fitted head by {worst:.2e} (want <= 1e-4)")
    os.replace(out_model + ".partial", out_model)

    prior = prior_upright(np.random.default_rng(0))
    manifest["orientation"] = {
        "tensor": TAP, "shape": [1, 4], "prior_upright": round(prior, 3),
        "meaning": "probabilities that the picture fed is its upright picture turned 0, 1, 2, 3 quarter turns "
                   "counterclockwise (NumPy rot90); the product asks about a print's view turned four ways and "
                   "lets the answers vote with prior_upright (UprightVote)",
        "head": f"the bottleneck {BOTTLENECK} averaged over 4x4 blocks (3072), standardised, logistic regression "
                f"(C={args.C}), folded into one Gemm; Softmax",
        "data": f"{args.crops} print-like crops of each of the {len(split['train'])} colour training photos "
                f"(tools/train/split.json 'train'), each turned 4 ways: {len(y)} pictures",
        "command": f"python3 tools/train/upright.py --model {os.path.relpath(args.model, ROOT)} --out OUT "
                   f"--crops {args.crops} --C {args.C} --seed {args.seed}",
        "training_accuracy": round(train_acc, 3), "grouped_4fold_accuracy": round(float(np.mean(cv)), 3),
        "onnxruntime_vs_fitted_max_abs": worst,
        "prior_from": "tools/scenes/dr_render.py's print angle and camera roll distributions, Monte Carlo",
    }
    with open(os.path.join(args.out, "manifest.json.partial"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    os.replace(os.path.join(args.out, "manifest.json.partial"), os.path.join(args.out, "manifest.json"))
    print(f"wrote {args.out} (head checked against onnxruntime: {worst:.1e}; prior_upright {prior:.3f})")


if __name__ == "__main__":
    main()
