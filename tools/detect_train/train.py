#!/usr/bin/env python3
"""Trains the detector's front-end CNN (model.py) on packs made by tools/scenes/dr_render.py (train split only).

  train.py --pack .build/dr/train-11.npz [--pack …] --minutes 60 --out .build/dr/run [--resume CKPT] [--crop 96x128]
           [--init-onnx Models/detect-default/model.onnx]

--init-onnx starts from an exported model (its BatchNorm folded into the convolutions): each BatchNorm becomes the
identity plus the folded bias and stays frozen (running statistics fixed, eval mode), so fine-tuning continues that
exact function; the check prints the largest difference from onnxruntime on a pack's first scenes.

Loss: binary cross-entropy on the interior map + 2 × BCE on the paper-edge map (positives weighted 3×; the cells of an
edge between two prints — one lying on the other — weighted --junction-weight more, `junction_cells`) + the corner
loss: in every cell inside a print (the topmost there, amodal under hands), smooth-L1 between the predicted and the
true corner offsets (cells), the smallest over the four cyclic orders (a quad has no first corner), weighted
--corner-weight; prints reaching out of the frame count a fifth (their hidden corners are guesses). Corner targets
are made per batch from the packs' corners (packs without them train the maps only). Augmented with flips and
brightness / contrast / chroma jitter; random crops (the net is fully convolutional; the corner loss then counts only
prints wholly inside the crop). Time-bounded:
cosine learning-rate decay over --minutes; a checkpoint (`ckpt.pt`) every epoch and at the end, always the latest —
no checkpoint is picked by any score, the held-out benchmark never enters training. A progress line per 50 steps.
"""
import argparse
import glob
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import PrintNet, normalise  # noqa: E402


CELL_PX = 4  # the packs are rendered at 640×480: a cell is 4 px


def corner_targets(quads, height, width, window):
    """Per-cell corner offsets [N, 8, h, w] (cells, clockwise on screen) and weights [N, h, w] for the cells of
    `window` (top, left, h, w) of a height × width grid, from `quads` [N, 8, 4, 2] (grid cells, bottom to top, NaN
    after the last)."""
    import cv2
    top, left, h, w = window
    n = quads.shape[0]
    target = np.zeros((n, 8, h, w), np.float32)
    weight = np.zeros((n, h, w), np.float32)
    jj, ii = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = ii + left + 0.5, jj + top + 0.5
    for k in range(n):
        owner = np.full((h, w), -1, np.int32)
        count = 0
        for i in range(quads.shape[1]):
            q = quads[k, i]
            if np.isnan(q).any():
                break
            count += 1
            pts = np.round((q - [left + 0.5, top + 0.5]) * 16).astype(np.int32)  # cell (i, j)'s centre at (i, j)
            mask = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(mask, pts, 1, lineType=cv2.LINE_8, shift=4)
            owner[mask > 0] = i
        for i in range(count):
            q = quads[k, i]
            a = q[:, 0] * np.roll(q[:, 1], -1) - np.roll(q[:, 0], -1) * q[:, 1]
            if a.sum() < 0:  # counter-clockwise on screen (a flip): reverse
                q = q[[0, 3, 2, 1]]
            inside = (q[:, 0] >= left).all() and (q[:, 0] <= left + w).all() \
                and (q[:, 1] >= top).all() and (q[:, 1] <= top + h).all()
            sel = owner == i
            for c in range(4):
                target[k, 2 * c][sel] = (q[c, 0] - cx)[sel]
                target[k, 2 * c + 1][sel] = (q[c, 1] - cy)[sel]
            weight[k][sel] = 1.0 if inside else 0.2
    return torch.from_numpy(target), torch.from_numpy(weight)


def jitter(x, uniform):
    """Brightness / contrast and chroma jitter of a normalised batch [N,3,h,w] (a copy), with `uniform(lo, hi,
    *shape)` drawing the factors (numpy's generator here, the device's in stream_train.py), in this order."""
    n = x.shape[0]
    g, b = uniform(0.7, 1.3, n, 1, 1), uniform(-0.15, 0.15, n, 1, 1)
    x = x.clone()
    x[:, 0] = (x[:, 0] * g + b).clamp(-0.5, 0.5)
    x[:, 1:] = x[:, 1:] * uniform(0.6, 1.4, n, 1, 1, 1) + uniform(-0.05, 0.05, n, 2, 1, 1)
    return x


def learning_rate(base, fraction, steps_done, warmup_steps):
    """Linear warm-up over `warmup_steps`, then cosine from `base` to 2 % of it over the time budget (`fraction` of
    it used)."""
    return base * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * fraction))) * min(1.0, (steps_done + 1) / warmup_steps)


def augment(x, y, crop, rng, quads=None):
    """Crops, flips and jitters a batch; with `quads` ([N, 8, 4, 2] frame px) also returns its corner targets."""
    gh, gw = x.shape[2], x.shape[3]
    top, left, ch, cw = 0, 0, gh, gw
    if crop is not None:
        ch, cw = crop
        top = int(rng.integers(0, x.shape[2] - ch + 1))
        left = int(rng.integers(0, x.shape[3] - cw + 1))
        x, y = x[:, :, top:top + ch, left:left + cw], y[:, :, top:top + ch, left:left + cw]
    q = None if quads is None else quads / CELL_PX
    if rng.random() < 0.5:
        x, y = x.flip(3), y.flip(3)
        if q is not None:
            q = q.copy()
            q[..., 0] = gw - q[..., 0]
            left = gw - left - cw
    if rng.random() < 0.5:
        x, y = x.flip(2), y.flip(2)
        if q is not None:
            q = q.copy()
            q[..., 1] = gh - q[..., 1]
            top = gh - top - ch
    x = jitter(x, lambda lo, hi, *shape: torch.from_numpy(rng.uniform(lo, hi, shape)).float())
    if q is None:
        return x, y, None
    return x, y, corner_targets(q, gh, gw, (top, left, ch, cw))


def init_from_onnx(model, path, x_check):
    """Loads an exported PrintNet's folded weights (see the module comment); returns the max |torch − onnxruntime|."""
    import onnx
    import onnxruntime
    from onnx import numpy_helper
    graph = onnx.load(path).graph
    weights = {i.name: numpy_helper.to_array(i).copy() for i in graph.initializer}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    blocks = [model.stem, model.e1[0], model.e1[1], model.e2[0], model.e2[1]] + [model.e3[i] for i in range(4)] \
        + [model.d2, model.d1]  # each Conv2d (no bias), BatchNorm2d, ReLU
    assert len(convs) == len(blocks) + 2, f"{path}: {len(convs)} convolutions, not a PrintNet"
    with torch.no_grad():
        for node, (conv, bn, _) in zip(convs, blocks):
            conv.weight.copy_(torch.from_numpy(weights[node.input[1]]))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(weights[node.input[2]]))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        for node, conv in zip(convs[-2:], [model.head[0], model.head[2]]):
            conv.weight.copy_(torch.from_numpy(weights[node.input[1]]))
            conv.bias.copy_(torch.from_numpy(weights[node.input[2]]))
    model.eval()
    x = normalise(x_check)
    with torch.no_grad():
        ours = model(x)[:, :2].numpy()
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    theirs = np.concatenate([session.run(None, {name: x[i:i + 1].numpy()})[0] for i in range(x.shape[0])])
    return float(np.abs(ours - theirs).max())


def train_mode(model, frozen_bn):
    model.train()
    if frozen_bn:
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()


def corner_loss(pred, target, weight):
    """Smooth-L1 (cells) summed over the 8 coordinates, least over the target's four cyclic orders, weighted mean."""
    n, _, h, w = pred.shape
    t = target.view(n, 4, 2, h, w)
    per_order = [F.smooth_l1_loss(pred, t.roll(s, dims=1).reshape(n, 8, h, w), reduction="none", beta=1.0).sum(1)
                 for s in range(4)]
    best = torch.stack(per_order).min(0).values
    return (best * weight).sum() / weight.sum().clamp(min=1.0)


def junction_cells(y):
    """[N, h, w] 1.0 on the paper-edge cells (edge target > 0.3) that have print interior in every cell of the 5 × 5
    cells around them: an edge between two prints (one lying on the other), not between a print and the table; else 0.
    Where the net leaves such an edge open, two prints' interiors join into one region."""
    inside = -F.max_pool2d(-y[:, 0:1], 5, stride=1, padding=2)
    return ((y[:, 1:2] > 0.3) & (inside >= 0.5)).float()[:, 0]


def loss_fn(logits, y, corners=None, corner_weight=0.02, junction_weight=1.0):
    maps, pred = logits
    interior = F.binary_cross_entropy_with_logits(maps[:, 0], y[:, 0])
    weight = 1 + (junction_weight - 1) * junction_cells(y) if junction_weight != 1 else None
    edge = F.binary_cross_entropy_with_logits(maps[:, 1], y[:, 1], weight=weight,
                                              pos_weight=torch.tensor(3.0, device=maps.device))
    total = interior + 2 * edge
    lc = 0.0
    if corners is not None and pred is not None:
        c = corner_loss(pred, *corners)
        total = total + corner_weight * c
        lc = c.item()
    return total, interior.item(), edge.item(), lc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pack", action="append", required=True,
                   help="a pack file or a glob; globs are looked at again at each epoch (packs still rendering join)")
    p.add_argument("--minutes", type=float, default=60)
    p.add_argument("--out", required=True)
    p.add_argument("--resume", default=None)
    p.add_argument("--init-onnx", default=None)
    p.add_argument("--batch", type=int, default=24)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--crop", default="96x128")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--corner-weight", type=float, default=0.02)
    p.add_argument("--corner-kernel", type=int, default=1, help="the corner head's first convolution: 1 or 3")
    p.add_argument("--junction-weight", type=float, default=1.0,
                   help="the edge loss's weight on edges between two prints (junction_cells), against 1 elsewhere")
    p.add_argument("--trunk-from", default=None,
                   help="a checkpoint whose trunk and map head are loaded (its corner head, if any, is not)")
    p.add_argument("--train-only-corners", action="store_true",
                   help="train the corner head alone (trunk and map head frozen, BatchNorm in eval mode)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    loaded = {}

    def load_packs():
        for pattern in args.pack:
            for path in sorted(glob.glob(pattern)):
                if path not in loaded:
                    d = np.load(path)
                    quads = d["corners"] if "corners" in d.files else \
                        np.full((d["X"].shape[0], 8, 4, 2), np.nan, np.float32)
                    loaded[path] = (d["X"], d["Y"], quads)
        x = torch.from_numpy(np.concatenate([v[0] for v in loaded.values()]))
        y = torch.from_numpy(np.concatenate([v[1] for v in loaded.values()]))
        return x, y, np.concatenate([v[2] for v in loaded.values()])

    x_all, y_all, q_all = load_packs()
    n = x_all.shape[0]
    crop = tuple(int(v) for v in args.crop.split("x")) if args.crop != "none" else None
    os.makedirs(args.out, exist_ok=True)
    model = PrintNet(corner_kernel=args.corner_kernel)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    step0 = 0
    if args.resume:
        state = torch.load(args.resume)
        model.load_state_dict(state["model"])
        step0 = state.get("step", 0)
    if args.trunk_from:
        trunk = torch.load(args.trunk_from, map_location="cpu")
        model.load_state_dict({k: v for k, v in trunk["model"].items() if not k.startswith("corner_head.")},
                              strict=False)
    frozen_bn = args.init_onnx is not None or (args.resume is not None and state.get("frozen_bn", False)) \
        or (args.trunk_from is not None and trunk.get("frozen_bn", False)) or args.train_only_corners
    if args.train_only_corners:
        for name, param in model.named_parameters():
            param.requires_grad = name.startswith("corner_head.")
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=1e-4)
    if args.init_onnx:
        diff = init_from_onnx(model, args.init_onnx, x_all[:4, :, :120, :160])
        print(f"init from {args.init_onnx}: max |torch - onnxruntime| {diff:.2e}", flush=True)
        if diff > 1e-3:
            raise SystemExit(f"train: {args.init_onnx}: the weights do not reproduce the model ({diff:.2e})")
    print(f"train: {n} scenes from {args.pack}, {sum(p.numel() for p in model.parameters())} parameters, "
          f"{args.minutes} min, batch {args.batch}, crop {crop}", flush=True)
    start = time.time()
    budget = args.minutes * 60
    step, epoch = step0, 0
    log = []
    running = None
    done = False
    while not done:
        if epoch > 0:
            x_all, y_all, q_all = load_packs()
            n = x_all.shape[0]
            print(f"epoch {epoch}: {n} scenes ({len(loaded)} packs)", flush=True)
        order = torch.from_numpy(rng.permutation(n))
        for k in range(0, n - args.batch + 1, args.batch):
            elapsed = time.time() - start
            if elapsed > budget:
                done = True
                break
            frac = elapsed / budget
            lr = learning_rate(args.lr, frac, step - step0, 100)
            for group in opt.param_groups:
                group["lr"] = lr
            idx = order[k:k + args.batch]
            x = normalise(x_all[idx])
            y = y_all[idx].float() / 255
            x, y, corners = augment(x, y, crop, rng, q_all[idx.numpy()])
            train_mode(model, frozen_bn)
            loss, li, le, lc = loss_fn(model.logits(x), y, corners, args.corner_weight, args.junction_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
            if step % 50 == 0:
                eta = (budget - (time.time() - start)) / 60
                print(f"step {step} epoch {epoch} loss {running:.4f} (interior {li:.4f} edge {le:.4f} corners {lc:.3f}) lr {lr:.5f} "
                      f"{(step - step0) * args.batch / (time.time() - start):.1f} scenes/s, {eta:.1f} min left",
                      flush=True)
                log.append({"step": step, "loss": running, "minutes": (time.time() - start) / 60})
        epoch += 1
        torch.save({"model": model.state_dict(), "step": step, "epoch": epoch, "frozen_bn": frozen_bn},
                   os.path.join(args.out, "ckpt.pt"))
    torch.save({"model": model.state_dict(), "step": step, "epoch": epoch, "frozen_bn": frozen_bn},
                   os.path.join(args.out, "ckpt.pt"))
    with open(os.path.join(args.out, "train_log.json"), "w") as out:
        json.dump({"args": vars(args), "packs": sorted(loaded), "scenes": n, "steps": step, "epochs": epoch,
                   "minutes": round((time.time() - start) / 60, 1), "log": log}, out)
    print(f"done: {step} steps, {epoch} epochs, {(time.time() - start) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
