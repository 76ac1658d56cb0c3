"""Train the colorcam colorizer (both heads on one trunk) on the cached photos, on CPU, one thread.

    nice -n 19 python3 tools/train/train.py --work /work/data/color --minutes 75 --out /work/data/color/run1

Reproducible from --seed (data order, crops, augmentation, initial weights). Every --checkpoint-minutes it writes
OUT/last.pt (model, optimiser, step) and appends to OUT/log.txt; resuming from OUT/last.pt continues the schedule.
Loss: L1 on ab (regression head, ab units / 10) + 0.2 x class-rebalanced cross-entropy on soft-encoded ab bins
(classification head; Zhang et al.: 5 nearest bins, sigma 5, rebalancing lambda 0.5). The learning rate follows a
cosine over the time budget, so a run of any length ends annealed.
"""
import argparse
import json
import math
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F

from model import ColorNet, init_from_onnx, model_input
from print_sim import print_view, simulate_hints

HERE = os.path.dirname(os.path.abspath(__file__))


def rebalance_weights(cache, train_ids, bins, lam=0.5, sigma=5.0, rng=None):
    """Zhang et al.'s class weights: w ∝ ((1-λ) p̃ + λ/Q)^-1 with p̃ the smoothed empirical bin distribution,
    normalised so E_p[w] = 1. Also returns the training set's mean ab (the sepia baseline)."""
    samples = []
    for pid in train_ids:
        lab = cache[pid].astype(np.float32).reshape(-1, 3)
        samples.append(lab[rng.choice(len(lab), size=min(len(lab), 4000), replace=False), 1:])
    ab = np.concatenate(samples)
    d = ((ab[:, None, :] - bins[None]) ** 2).sum(-1)
    counts = np.bincount(d.argmin(1), minlength=len(bins)).astype(np.float64)
    p = counts / counts.sum()
    kern = np.exp(-((bins[:, None, :] - bins[None]) ** 2).sum(-1) / (2 * sigma ** 2))
    p_s = kern @ p
    p_s /= p_s.sum()
    w = 1.0 / ((1 - lam) * p_s + lam / len(bins))
    w /= (w * p_s).sum()
    return w.astype(np.float32), ab.mean(0), p


class Sampler:
    """Random crops from a multi-scale pyramid of each training photo, flips, and tuxpaint cut-outs pasted on."""

    def __init__(self, cache, ids, stamps, crop, rng):
        self.crop, self.rng, self.stamps = crop, rng, stamps
        self.levels = []
        for pid in ids:
            lab = torch.from_numpy(cache[pid].astype(np.float32)).permute(2, 0, 1)[None]
            for target in (512, 320, 200):
                s = target / max(lab.shape[2:])
                if s > 1.01:
                    continue
                img = lab if abs(s - 1) < 0.01 else F.interpolate(lab, scale_factor=s, mode="area")
                if min(img.shape[2:]) >= crop:
                    self.levels.append(img[0])
        if not self.levels:
            raise SystemExit("no training photo is large enough for the crop size")

    def batch(self, n):
        out = torch.empty(n, 3, self.crop, self.crop)
        for i in range(n):
            img = self.levels[self.rng.randrange(len(self.levels))]
            y = self.rng.randrange(img.shape[1] - self.crop + 1)
            x = self.rng.randrange(img.shape[2] - self.crop + 1)
            c = img[:, y:y + self.crop, x:x + self.crop]
            if self.rng.random() < 0.5:
                c = c.flip(2)
            c = c.clone()
            if self.stamps and self.rng.random() < 0.3:
                st = self.stamps[self.rng.randrange(len(self.stamps))]
                h, w = st.shape[1:]
                s = min(1.0, self.crop / max(h, w) * self.rng.uniform(0.4, 0.9))
                if s < 1:
                    st = F.interpolate(st[None], scale_factor=s, mode="area")[0]
                h, w = st.shape[1:]
                y0, x0 = self.rng.randrange(self.crop - h + 1), self.rng.randrange(self.crop - w + 1)
                a = st[3:4] / 100.0
                c[:, y0:y0 + h, x0:x0 + w] = c[:, y0:y0 + h, x0:x0 + w] * (1 - a) + st[:3] * a
            out[i] = c
        return out


class PrintSampler:
    """What the product feeds the model (print_sim.py): a view of a training photo (50–100 % of each side, any
    aspect) squashed to 256 x 256 as the product squashes a rectified print, a tuxpaint cut-out pasted on 30 % of
    views, rendered as an old print under a webcam and rectified back; then a random `crop` x `crop` window (the
    product's scale) and simulated hints. Yields (L seen, hint ab, hint mask, target ab) tensors."""

    def __init__(self, cache, ids, stamps, crop, rng):
        self.crop, self.rng, self.stamps = crop, rng, stamps
        self.np_rng = np.random.default_rng(rng.randrange(1 << 30))
        self.photos = [cache[pid] for pid in ids]

    def view(self):
        import cv2
        img = self.photos[self.rng.randrange(len(self.photos))]
        h, w = img.shape[:2]
        ch, cw = int(h * self.rng.uniform(0.5, 1.0)), int(w * self.rng.uniform(0.5, 1.0))
        y, x = self.rng.randrange(h - ch + 1), self.rng.randrange(w - cw + 1)
        lab = cv2.resize(img[y:y + ch, x:x + cw].astype(np.float32), (256, 256), interpolation=cv2.INTER_AREA)
        if self.rng.random() < 0.5:
            lab = lab[:, ::-1]
        lab = np.ascontiguousarray(lab)
        if self.stamps and self.rng.random() < 0.3:
            st = self.stamps[self.rng.randrange(len(self.stamps))].permute(1, 2, 0).numpy()
            sh, sw = st.shape[:2]
            s = min(1.0, 256 / max(sh, sw) * self.rng.uniform(0.3, 0.8))
            st = cv2.resize(st, (max(1, int(sw * s)), max(1, int(sh * s))), interpolation=cv2.INTER_AREA)
            sh, sw = st.shape[:2]
            y0, x0 = self.rng.randrange(256 - sh + 1), self.rng.randrange(256 - sw + 1)
            a = st[..., 3:4] / 100.0
            lab[y0:y0 + sh, x0:x0 + sw] = lab[y0:y0 + sh, x0:x0 + sw] * (1 - a) + st[..., :3] * a
        return lab

    def batch(self, n):
        c = self.crop
        L = torch.empty(n, 1, c, c)
        hint = torch.empty(n, 2, c, c)
        mask = torch.empty(n, 1, c, c)
        ab = torch.empty(n, 2, c, c)
        for i in range(n):
            seen, target = print_view(self.np_rng, self.view())
            y, x = self.rng.randrange(256 - c + 1), self.rng.randrange(256 - c + 1)
            target = target[y:y + c, x:x + c]
            h_ab, h_m = simulate_hints(self.np_rng, target)
            L[i, 0] = torch.from_numpy(np.ascontiguousarray(seen[y:y + c, x:x + c]))
            ab[i] = torch.from_numpy(np.ascontiguousarray(target.transpose(2, 0, 1)))
            hint[i] = torch.from_numpy(h_ab.transpose(2, 0, 1).copy())
            mask[i, 0] = torch.from_numpy(h_m)
        return L, hint, mask, ab


def soft_encode(ab, bins, k=5, sigma=5.0):
    """ab (N,2,h,w) -> soft targets (N,Q,h,w) over the k nearest bins, and each pixel's nearest bin."""
    n, _, h, w = ab.shape
    flat = ab.permute(0, 2, 3, 1).reshape(-1, 2)
    d2 = torch.cdist(flat, bins) ** 2
    dk, ik = d2.topk(k, largest=False)
    wk = torch.exp(-dk / (2 * sigma ** 2))
    wk = wk / wk.sum(1, keepdim=True)
    tgt = torch.zeros(flat.shape[0], bins.shape[0]).scatter_(1, ik, wk)
    return tgt.reshape(n, h, w, -1).permute(0, 3, 1, 2), ik[:, 0].reshape(n, h, w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--out", default="/work/data/color/run")
    ap.add_argument("--minutes", type=float, default=75)
    ap.add_argument("--checkpoint-minutes", type=float, default=4)
    ap.add_argument("--crop", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--cls-weight", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--print-sim", action="store_true",
                    help="train on what the product sees (print_sim.py: prints under a webcam, rectified, hints)")
    ap.add_argument("--init-onnx", help="start from an exported model (its BatchNorms folded; they stay frozen)")
    ap.add_argument("--lr-min", type=float, default=1e-4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    split = json.load(open(os.path.join(HERE, "split.json")))
    cache = np.load(os.path.join(args.work, "cache.npz"))
    st = np.load(os.path.join(args.work, "stamps.npz"))
    stamps = [torch.from_numpy(st[k].astype(np.float32)).permute(2, 0, 1) for k in st.files]
    net = ColorNet()
    bins = net.bins
    w_np, mean_ab, _ = rebalance_weights(cache, split["train"], bins.numpy(), rng=np.random.default_rng(args.seed))
    class_w = torch.from_numpy(w_np)
    json.dump({"mean_ab": mean_ab.tolist(), "bins": bins.shape[0]}, open(os.path.join(args.out, "stats.json"), "w"))
    sampler = (PrintSampler if args.print_sim else Sampler)(cache, split["train"], stamps, args.crop, rng)
    if args.init_onnx and not os.path.exists(os.path.join(args.out, "last.pt")):
        init_from_onnx(net, args.init_onnx)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    step, used_s = 0, 0.0
    ckpt = os.path.join(args.out, "last.pt")
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, used_s = state["step"], state["used_s"]
    log = open(os.path.join(args.out, "log.txt"), "a")
    log.write(f"start step {step} used {used_s:.0f}s photos {len(split['train'])} stamps {len(stamps)} "
              f"args {vars(args)}\n")
    log.flush()
    budget_s = args.minutes * 60
    t0, last_ckpt = time.time() - used_s, time.time()
    acc = {"l1": 0.0, "ce": 0.0, "n": 0}
    frozen_bn = args.init_onnx is not None
    net.train()
    if frozen_bn:
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()
    while True:
        used_s = time.time() - t0
        if used_s >= budget_s:
            break
        lr = args.lr_min + (args.lr - args.lr_min) * 0.5 * (1 + math.cos(math.pi * used_s / budget_s))
        for g in opt.param_groups:
            g["lr"] = lr
        if args.print_sim:
            L, hint, mask, ab = sampler.batch(args.batch)
        else:
            lab = sampler.batch(args.batch)
            L, ab = lab[:, :1], lab[:, 1:]
            hint, mask = torch.zeros_like(ab), torch.zeros_like(L)
        ab_half = F.avg_pool2d(ab, 2)
        reg, logits = net(model_input(L, hint, mask))
        l1 = (reg - ab_half).abs().mean() / 10.0
        tgt, nearest = soft_encode(F.avg_pool2d(ab_half, 2), bins)
        ce_px = -(tgt * F.log_softmax(logits, 1)).sum(1)
        ce = (ce_px * class_w[nearest]).mean()
        loss = l1 + args.cls_weight * ce
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        acc["l1"] += l1.item() * 10
        acc["ce"] += ce.item()
        acc["n"] += 1
        if time.time() - last_ckpt >= args.checkpoint_minutes * 60 or time.time() - t0 >= budget_s:
            n = acc["n"]
            log.write(f"step {step} min {used_s / 60:.1f} lr {lr:.2e} abL1 {acc['l1'] / n:.2f} ce {acc['ce'] / n:.3f} "
                      f"patches {step * args.batch}\n")
            log.flush()
            acc = {"l1": 0.0, "ce": 0.0, "n": 0}
            torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step,
                        "used_s": time.time() - t0, "args": vars(args)}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
            last_ckpt = time.time()
    torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step, "used_s": time.time() - t0,
                "args": vars(args)}, ckpt)
    torch.save({"model": net.state_dict(), "step": step, "args": vars(args)}, os.path.join(args.out, "final.pt"))
    log.write(f"done step {step} minutes {(time.time() - t0) / 60:.1f}\n")


if __name__ == "__main__":
    main()
