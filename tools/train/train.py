"""Train the colorcam colorizer (both heads on one trunk) on the cached photos, on CPU (one thread) or a GPU.

    nice -n 19 python3 tools/train/train.py --work /work/data/color --minutes 75 --out /work/data/color/run1
    python3 tools/train/train.py --pack .gpu/color --device cuda --workers 4 --width 1.5 --print-sim ...

Data: --work's cache.npz / stamps.npz, or --pack (colordata.py: the training photos only, compressed). With
--workers N > 0, N processes (torch DataLoader, each its own seed) render the batches; with 0 the main process does,
exactly as before. --reuse K cuts K crops (random window, flip, own hints) from each rendered print view.
--width scales every channel count (model.py; 1.0 is v1's architecture; with --init-onnx the file's width is the
default). --hold-back N keeps N seeded training photos out of a run, as a validation set for choosing settings.

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

from colordata import load_data
from model import ColorNet, init_from_onnx, model_input, onnx_width
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

    def __init__(self, cache, ids, stamps, crop, rng, reuse=1):
        self.crop, self.rng, self.stamps, self.reuse = crop, rng, stamps, reuse
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
            if i % self.reuse == 0:
                seen_view, target_view = print_view(self.np_rng, self.view())
            seen, target = seen_view, target_view
            if self.reuse > 1 and self.rng.random() < 0.5:
                seen, target = seen[:, ::-1], target[:, ::-1]
            y, x = self.rng.randrange(256 - c + 1), self.rng.randrange(256 - c + 1)
            target = np.ascontiguousarray(target[y:y + c, x:x + c])
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
    tgt = torch.zeros(flat.shape[0], bins.shape[0], device=ab.device).scatter_(1, ik, wk)
    return tgt.reshape(n, h, w, -1).permute(0, 3, 1, 2), ik[:, 0].reshape(n, h, w)


class BatchStream(torch.utils.data.IterableDataset):
    """Endless batches for one DataLoader worker: its own sampler and seed (base seed + worker id)."""

    def __init__(self, cache, ids, stamps, args, seed):
        super().__init__()
        self.cache, self.ids, self.stamps, self.args, self.seed = cache, ids, stamps, args, seed

    def __iter__(self):
        import cv2
        cv2.setNumThreads(1)
        torch.set_num_threads(1)
        info = torch.utils.data.get_worker_info()
        wid = info.id if info is not None else 0
        a = self.args
        rng = random.Random(self.seed * 1000 + 7919 * (wid + 1))
        if a.print_sim:
            sampler = PrintSampler(self.cache, self.ids, self.stamps, a.crop, rng, a.reuse)
            failures = 0
            while True:  # float16 halves what crosses the process boundary (L and ab need no more)
                try:
                    b = sampler.batch(a.batch)
                except Exception as e:  # one odd draw of the simulation must not end a run on a borrowed GPU
                    failures += 1
                    if failures > 20:
                        raise
                    print(f"[color] worker {wid}: batch failed ({e!r}); drawing another", flush=True)
                    continue
                yield tuple(t.half() for t in b)
        sampler = Sampler(self.cache, self.ids, self.stamps, a.crop, rng)
        while True:
            lab = sampler.batch(a.batch)
            L, ab = lab[:, :1], lab[:, 1:]
            yield tuple(t.half() for t in (L, torch.zeros_like(ab), torch.zeros_like(L), ab))


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
    ap.add_argument("--pack", help="read the data from a pack (colordata.py) instead of --work's cache")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader processes rendering batches (0: in-process)")
    ap.add_argument("--reuse", type=int, default=1, help="--print-sim: crops cut from each rendered print view")
    ap.add_argument("--width", type=float, help="channel width factor (model.py); default: --init-onnx's, else 1.0")
    ap.add_argument("--hold-back", type=int, default=0, metavar="N",
                    help="leave N training photos (seeded by --seed) out of this run and list them in OUT/held-back.json: "
                         "a validation set of training-side photos for choosing settings (pipeline_eval.py --ids)")
    ap.add_argument("--threads", type=int, default=1, help="torch's CPU threads (default 1)")
    ap.add_argument("--log", help="log file (default OUT/log.txt)")
    ap.add_argument("--light-ckpt", help="also write a model-only checkpoint here at every checkpoint (atomic)")
    ap.add_argument("--progress-seconds", type=float, default=30, help="a progress line on stdout this often")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    split = json.load(open(os.path.join(HERE, "split.json")))
    cache, stamps = load_data(work=args.work, pack=args.pack)
    train_ids = list(split["train"])
    if args.hold_back:
        held = os.path.join(args.out, "held-back.json")
        if os.path.exists(held):  # a resumed run keeps the photos it started without
            back = json.load(open(held))
        else:
            back = sorted(np.random.default_rng(args.seed).choice(train_ids, args.hold_back, replace=False).tolist())
            json.dump(back, open(held, "w"), indent=0)
        left_out = set(back)
        train_ids = [pid for pid in train_ids if pid not in left_out]
    split["train"] = train_ids
    cache = {pid: cache[pid] for pid in train_ids}  # materialised: workers must not share the npz file
    dev = torch.device(args.device)
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cudnn.benchmark = True
    if args.width is None:
        args.width = onnx_width(args.init_onnx) if args.init_onnx else 1.0
    net = ColorNet(width=args.width)
    bins = net.bins
    w_np, mean_ab, _ = rebalance_weights(cache, split["train"], bins.numpy(), rng=np.random.default_rng(args.seed))
    class_w = torch.from_numpy(w_np)
    json.dump({"mean_ab": mean_ab.tolist(), "bins": bins.shape[0]}, open(os.path.join(args.out, "stats.json"), "w"))
    if args.workers == 0:
        sampler = (PrintSampler(cache, split["train"], stamps, args.crop, rng, args.reuse) if args.print_sim
                   else Sampler(cache, split["train"], stamps, args.crop, rng))
    if args.init_onnx and not os.path.exists(os.path.join(args.out, "last.pt")):
        init_from_onnx(net, args.init_onnx)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    step, used_s = 0, 0.0
    ckpt = os.path.join(args.out, "last.pt")
    if os.path.exists(ckpt):
        state = torch.load(ckpt, map_location="cpu")
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, used_s = state["step"], state["used_s"]
    if args.workers > 0:  # started before CUDA is touched: the workers are forked and stay on the CPU
        # batches in flight live in /dev/shm: fit the prefetch to it (a container's default is only 64 MiB)
        batch_bytes = args.batch * 4 * args.crop * args.crop * 2
        try:
            import shutil
            shm_free = shutil.disk_usage("/dev/shm").free
        except OSError:
            shm_free = 1 << 34
        prefetch = int(max(1, min(6, shm_free * 0.4 // (batch_bytes * args.workers))))
        print(f"[color] /dev/shm free {shm_free / 2 ** 20:.0f} MiB: prefetch {prefetch} batches of "
              f"{batch_bytes / 2 ** 20:.1f} MiB per worker", flush=True)
        loader = torch.utils.data.DataLoader(
            BatchStream(cache, split["train"], stamps, args, args.seed * 100003 + step), batch_size=None,
            num_workers=args.workers, prefetch_factor=prefetch, persistent_workers=True,
            pin_memory=args.device == "cuda", multiprocessing_context="fork")
        batches = iter(loader)
    net.to(dev)
    bins, class_w = bins.to(dev), class_w.to(dev)
    for s_ in opt.state.values():
        for k, v in s_.items():
            if torch.is_tensor(v) and k != "step":
                s_[k] = v.to(dev)
    log = open(args.log or os.path.join(args.out, "log.txt"), "a")
    n_params = sum(p.numel() for p in net.parameters())
    log.write(f"start step {step} used {used_s:.0f}s photos {len(split['train'])} stamps {len(stamps)} "
              f"params {n_params} args {vars(args)}\n")
    log.flush()
    print(f"[color] start step {step} photos {len(split['train'])} stamps {len(stamps)} width {args.width} "
          f"params {n_params} device {args.device} workers {args.workers}", flush=True)
    budget_s = args.minutes * 60
    t0, last_ckpt = time.time() - used_s, time.time()
    acc = {"l1": 0.0, "ce": 0.0, "n": 0}
    prog = {"l1": 0.0, "ce": 0.0, "n": 0, "wait": 0.0, "t": time.time()}

    def save_light():
        if args.light_ckpt:
            torch.save({"model": {k: v.detach().cpu() for k, v in net.state_dict().items()}, "step": step,
                        "used_s": time.time() - t0, "args": vars(args)}, args.light_ckpt + ".tmp")
            os.replace(args.light_ckpt + ".tmp", args.light_ckpt)
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
        tw = time.time()
        if args.workers > 0:
            L, hint, mask, ab = (t.to(dev, non_blocking=True).float() for t in next(batches))
        elif args.print_sim:
            L, hint, mask, ab = (t.to(dev) for t in sampler.batch(args.batch))
        else:
            lab = sampler.batch(args.batch).to(dev)
            L, ab = lab[:, :1], lab[:, 1:]
            hint, mask = torch.zeros_like(ab), torch.zeros_like(L)
        prog["wait"] += time.time() - tw
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
        l1v, cev = l1.item() * 10, ce.item()
        for a in (acc, prog):
            a["l1"] += l1v
            a["ce"] += cev
            a["n"] += 1
        if time.time() - prog["t"] >= args.progress_seconds:
            dt, n = time.time() - prog["t"], prog["n"]
            print(f"[color] step {step} min {(time.time() - t0) / 60:.1f} lr {lr:.2e} abL1 {prog['l1'] / n:.2f} "
                  f"ce {prog['ce'] / n:.3f} batches/s {n / dt:.2f} crops/s {n * args.batch / dt:.0f} "
                  f"data-wait {100 * prog['wait'] / dt:.0f}%", flush=True)
            prog = {"l1": 0.0, "ce": 0.0, "n": 0, "wait": 0.0, "t": time.time()}
        if time.time() - last_ckpt >= args.checkpoint_minutes * 60 or time.time() - t0 >= budget_s:
            n = acc["n"]
            log.write(f"step {step} min {used_s / 60:.1f} lr {lr:.2e} abL1 {acc['l1'] / n:.2f} ce {acc['ce'] / n:.3f} "
                      f"patches {step * args.batch}\n")
            log.flush()
            acc = {"l1": 0.0, "ce": 0.0, "n": 0}
            torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step,
                        "used_s": time.time() - t0, "args": vars(args)}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
            save_light()
            last_ckpt = time.time()
    torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step, "used_s": time.time() - t0,
                "args": vars(args)}, ckpt + ".tmp")
    os.replace(ckpt + ".tmp", ckpt)
    torch.save({"model": {k: v.detach().cpu() for k, v in net.state_dict().items()}, "step": step,
                "used_s": time.time() - t0, "args": vars(args)}, os.path.join(args.out, "final.pt"))
    save_light()
    log.write(f"done step {step} minutes {(time.time() - t0) / 60:.1f} patches {step * args.batch}\n")
    log.flush()
    print(f"[color] done step {step} minutes {(time.time() - t0) / 60:.1f}", flush=True)


if __name__ == "__main__":
    main()
