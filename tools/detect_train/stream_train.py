#!/usr/bin/env python3
"""Trains detector CNNs (model.py) on a stream of freshly rendered training scenes, on an accelerator when there is one.

  stream_train.py --out DIR --minutes 8 --workers 10 [--device cuda] [--photos DIR …]
                  [--variant NAME,width=1.0,lr=3e-3[,init=Models/detect-default/model.onnx]] …

`train.py` trains on packs rendered beforehand; here N worker processes render training-split scenes
(`dr_render.render`, photo tables at --photo-tables) for as long as training runs, so no scene is stored on disk and a
fast device sees tens of thousands of scenes. Every scene the workers render goes into a buffer on the device (up
to --capacity scenes: 0.44 GB per 1000, most of it the corner targets); each step draws a batch uniformly from the
buffer, flips it and jitters brightness, contrast and chroma (as `train.augment`, done on the device, the corner
targets transformed with the flips). The first --holdout scenes rendered are kept apart as a training-split check set (other scenes of the
same instances, not the held-out split: that one is only ever measured, by `tools/profile/detect_heldout.py`).

Several variants train side by side on the same batches (e.g. the shipped width from scratch, a fine-tune of the
shipped model, a wider net), each with its own optimiser and learning rate (warm-up, then cosine over the budget).
Loss as train.py (`loss_fn`, the corner loss included). Every --checkpoint-seconds and at the end each variant's
weights go to DIR/NAME.pt (atomic; `export.py` reads it) and DIR/stream_log.json gets the progress (scenes rendered,
steps, per-variant training loss and check-set loss). No checkpoint is picked by any score: the last one is kept.

Scene seeds: worker w renders scenes (--seed + w) × 10⁶ + k, k = 0, 1, …; the seeds must stay clear of the tuning
sets 90–99 (refused) and of the held-out split (a different split: never rendered here).
"""
import argparse
import glob
import json
import multiprocessing as mp
import os
import queue
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scenes"))
from model import PrintNet, normalise  # noqa: E402
from train import CELL_PX, corner_targets, init_from_onnx, jitter, learning_rate, loss_fn, train_mode  # noqa: E402

WIDTH, HEIGHT = 640, 480
GRID_H, GRID_W = HEIGHT // CELL_PX, WIDTH // CELL_PX
MAX_PRINTS = 8
CHUNK = 8  # scenes per queue message


def load_photos(cache_dir, extra_dirs):
    """The training split's photos (dr_photos' cache) and any extra photo folders' JPEG/PNG files, as (name, RGB)."""
    import cv2
    import dr_photos
    photos = list(dr_photos.photo_set("train", cache_dir)) if cache_dir else []
    for folder in extra_dirs:
        for path in sorted(glob.glob(os.path.join(folder, "*.jpg")) + glob.glob(os.path.join(folder, "*.png"))):
            bgr = cv2.imread(path, cv2.IMREAD_COLOR)
            if bgr is not None and min(bgr.shape[:2]) >= 64:
                photos.append((os.path.basename(path), cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    if not photos:
        raise SystemExit("stream_train: no photos (give --photo-cache and/or --photos)")
    return photos


# Training tables: 9 000 instances per kind of the train split's seed space (dr_textures.MAX_INSTANCES); the last
# 1 000 are the validation tables no training scene lies on. (Packs before 2026-12-05 drew from only the first 40.)
TRAIN_INSTANCES = "0:9000"


def scene_arrays(seed, photos, photo_tables, instances, overlap_rate=0.3, hands="plain"):
    """One training scene as the CNN sees it: X uint8 [3,gh,gw], Y uint8 [2,gh,gw], corner targets float16
    [8,gh,gw] (cells) and their weights float16 [gh,gw]. `instances`: the table texture instances (lo, hi);
    `overlap_rate`: how often prints may overlap; `hands`: plain or arms (`dr_render.render`)."""
    import dr_render
    frame, corners, _ = dr_render.render(seed, photos, WIDTH, HEIGHT, "train", photo_tables=photo_tables,
                                         instances=instances, overlap_rate=overlap_rate, hands=hands)
    quads = np.full((1, MAX_PRINTS, 4, 2), np.nan, np.float32)
    for i, c in enumerate(corners[:MAX_PRINTS]):
        quads[0, i] = np.asarray(c, np.float32)
    target, weight = corner_targets(quads / CELL_PX, GRID_H, GRID_W, (0, 0, GRID_H, GRID_W))
    return (dr_render.cnn_input(frame), dr_render.targets(corners, WIDTH, HEIGHT),
            target[0].numpy().astype(np.float16), weight[0].numpy().astype(np.float16))


def worker(index, args, out_queue, stop):
    """Renders scenes (args.seed + index) × 10⁶ + k into `out_queue`, CHUNK at a time, until `stop` is set. Runs in a
    spawned process (a forked one can hang in OpenCV's thread pool, which the parent has already started)."""
    import cv2
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    photos = load_photos(args.photo_cache, args.photos)
    import dr_textures
    instances = dr_textures.training_instance_range(args.texture_instances)
    base = (args.seed + index) * 1_000_000
    chunk, k = [], 0
    while not stop.is_set():
        chunk.append(scene_arrays(base + k, photos, args.photo_tables, instances, args.overlap_rate, args.hands))
        k += 1
        if len(chunk) == CHUNK:
            stacked = tuple(np.stack([c[j] for c in chunk]) for j in range(4))
            while not stop.is_set():
                try:
                    out_queue.put(stacked, timeout=1.0)
                    break
                except queue.Full:
                    continue
            chunk = []


class Buffer:
    """The scenes rendered so far, on the device, up to `capacity` (then writing starts over at the oldest; a chunk
    that reaches the end is cut there); uniform batches over what it holds."""

    def __init__(self, capacity, device):
        self.x = torch.empty(capacity, 3, GRID_H, GRID_W, dtype=torch.uint8, device=device)
        self.y = torch.empty(capacity, 2, GRID_H, GRID_W, dtype=torch.uint8, device=device)
        self.t = torch.empty(capacity, 8, GRID_H, GRID_W, dtype=torch.float16, device=device)
        self.w = torch.empty(capacity, GRID_H, GRID_W, dtype=torch.float16, device=device)
        self.count, self.capacity, self.device = 0, capacity, device

    def add(self, arrays):
        n = arrays[0].shape[0]
        start = self.count % self.capacity
        n = min(n, self.capacity - start)
        for dst, src in zip((self.x, self.y, self.t, self.w), arrays):
            dst[start:start + n].copy_(torch.from_numpy(src[:n]), non_blocking=False)
        self.count += n

    def batch(self, n, generator):
        idx = torch.randint(0, min(self.count, self.capacity), (n,), device=self.device, generator=generator)
        return self.x[idx], self.y[idx], self.t[idx].float(), self.w[idx].float()


def flip_corners(t, dim):
    """Corner targets [N,8,h,w] of a batch flipped along `dim` (3: left-right, 2: up-down): mirrored cells, the
    offsets' sign along that axis negated, the corners' order reversed (clockwise stays clockwise)."""
    t = t.flip(dim).view(t.shape[0], 4, 2, t.shape[2], t.shape[3])
    t = t[:, [0, 3, 2, 1]]
    axis = 0 if dim == 3 else 1
    t[:, :, axis] = -t[:, :, axis]
    return t.reshape(t.shape[0], 8, t.shape[3], t.shape[4])


def augment_on_device(x_uint8, y_uint8, t, w, generator):
    """train.augment's flips and jitter for a whole batch on the device (no crops: full frames, as v3 and v4)."""
    dev = x_uint8.device
    x = normalise(x_uint8)
    y = y_uint8.float() / 255
    rand = torch.rand(8, device=dev, generator=generator)
    if rand[0] < 0.5:
        x, y, w = x.flip(3), y.flip(3), w.flip(2)
        t = flip_corners(t, 3)
    if rand[1] < 0.5:
        x, y, w = x.flip(2), y.flip(2), w.flip(1)
        t = flip_corners(t, 2)
    x = jitter(x, lambda lo, hi, *shape: lo + (hi - lo) * torch.rand(*shape, device=dev, generator=generator))
    return x, y, (t, w)


def parse_variant(text):
    name, *rest = text.split(",")
    spec = {"name": name, "width": 1.0, "lr": 3e-3, "init": None}
    for item in rest:
        key, value = item.split("=", 1)
        if key not in spec:
            raise SystemExit(f"stream_train: --variant {text}: unknown key {key}")
        spec[key] = value if key == "init" else float(value)
    return spec


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--minutes", type=float, required=True, help="training time, after the buffer first fills")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--variant", action="append", default=None)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seed", type=int, default=200)
    p.add_argument("--photo-cache", default=".build/scenes-cache", help="dr_photos' cache folder ('' for none)")
    p.add_argument("--photos", action="append", default=[], help="a folder of extra training photos (JPEG/PNG)")
    p.add_argument("--photo-tables", type=float, default=0.3)
    p.add_argument("--texture-instances", default=TRAIN_INSTANCES, metavar="LO:HI",
                   help="table texture instances of the train split drawn from (9000:10000 is the validation "
                        "set of unseen tables, detect_heldout.py --split train --texture-instances 9000:10000)")
    p.add_argument("--min-scenes", type=int, default=1500, help="scenes in the buffer before the first step")
    p.add_argument("--fill-timeout", type=float, default=180, help="seconds to wait for --min-scenes, then fail")
    p.add_argument("--holdout", type=int, default=256, help="first scenes kept apart as the check set")
    p.add_argument("--capacity", type=int, default=80_000, help="scenes the buffer holds (then the oldest are overwritten)")
    p.add_argument("--corner-weight", type=float, default=0.02)
    p.add_argument("--junction-weight", type=float, default=1.0,
                   help="the edge loss's weight on edges between two prints (train.py --junction-weight)")
    p.add_argument("--overlap-rate", type=float, default=0.3,
                   help="how often a scene of two or more prints lets them overlap (dr_render.py pack --overlap-rate)")
    p.add_argument("--hands", choices=("plain", "arms"), default="arms",
                   help="the scenes' hands (dr_render.py --hands): arms (default since 2026-12-07: a thumb and a "
                        "forearm to the frame's edge; v6 finds 10 of 33 prints an arm crosses, "
                        "tools/profile/results/detect-arms-2026-12-07.txt) or plain")
    p.add_argument("--checkpoint-seconds", type=float, default=60)
    args = p.parse_args()
    if not 0 <= args.overlap_rate <= 1:
        p.error(f"--overlap-rate {args.overlap_rate}: must be in 0..1")
    if any(90 <= s <= 99 for s in range(args.seed, args.seed + args.workers)):
        p.error(f"--seed {args.seed}: workers' seeds reach the tuning sets 90-99")
    import dr_textures
    try:
        dr_textures.training_instance_range(args.texture_instances)
    except ValueError as e:
        p.error(str(e))
    variants = [parse_variant(v) for v in (args.variant or ["scratch,width=1.0,lr=3e-3"])]
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = torch.device(args.device)

    ctx = mp.get_context("spawn")
    out_queue, stop = ctx.Queue(maxsize=64), ctx.Event()
    photos = load_photos(args.photo_cache, args.photos)
    print(f"stream_train: {len(photos)} training photos", flush=True)
    procs = [ctx.Process(target=worker, args=(i, args, out_queue, stop), daemon=True)
             for i in range(args.workers)]
    for proc in procs:
        proc.start()
    started = time.time()
    generator = torch.Generator(device=dev)  # the device is first touched after the workers are forked
    generator.manual_seed(args.seed)
    buffer = Buffer(args.capacity, dev)
    check = []

    def drain(block):
        got = 0
        while True:
            try:
                arrays = out_queue.get(timeout=1.0 if block and got == 0 else 0.0)
            except queue.Empty:
                return got
            if sum(c[0].shape[0] for c in check) < args.holdout:
                check.append(arrays)
            else:
                buffer.add(arrays)
            got += arrays[0].shape[0]
            if got >= 256:
                return got

    while buffer.count < args.min_scenes:
        drain(True)
        if not any(proc.is_alive() for proc in procs):
            raise SystemExit("stream_train: every render worker died")
        if time.time() - started > args.fill_timeout:
            stop.set()
            rendered = buffer.count + sum(c[0].shape[0] for c in check)
            raise SystemExit(f"stream_train: the render workers gave {rendered} scenes in {args.fill_timeout:.0f} s "
                             f"(--min-scenes {args.min_scenes} after --holdout {args.holdout}): hung or far too slow")
    fill_s = time.time() - started
    print(f"stream_train: {buffer.count} scenes in {fill_s:.0f} s ({buffer.count / fill_s:.1f}/s, "
          f"{args.workers} workers), training {len(variants)} variant(s) for {args.minutes} min on {dev}", flush=True)
    check_x, check_y, check_t, check_w = (torch.from_numpy(np.concatenate([c[j] for c in check])).to(dev)
                                          for j in range(4))

    models = []
    for spec in variants:
        net = PrintNet(width=spec["width"], corner_kernel=1)
        frozen = spec["init"] is not None
        if frozen:
            diff = init_from_onnx(net, spec["init"], torch.from_numpy(check[0][0][:4]))
            print(f"{spec['name']}: init from {spec['init']}: max |torch - onnxruntime| {diff:.2e}", flush=True)
            if diff > 1e-3:
                raise SystemExit(f"stream_train: {spec['init']}: the weights do not reproduce the model ({diff:.2e})")
        net.to(dev)
        opt = torch.optim.AdamW(net.parameters(), lr=spec["lr"], weight_decay=1e-4)
        models.append({"spec": spec, "net": net, "opt": opt, "frozen": frozen, "running": None,
                       "params": sum(q.numel() for q in net.parameters())})

    def save(final):
        for m in models:
            path = os.path.join(args.out, m["spec"]["name"] + ".pt")
            torch.save({"model": {k: v.detach().cpu() for k, v in m["net"].state_dict().items()}, "step": step,
                        "frozen_bn": m["frozen"], "spec": m["spec"]}, path + ".tmp")
            os.replace(path + ".tmp", path)
        with open(os.path.join(args.out, "stream_log.json.tmp"), "w") as out:
            json.dump({"args": vars(args), "scenes_rendered": buffer.count + check_x.shape[0], "steps": step,
                       "fill_seconds": round(fill_s, 1), "final": final, "log": log}, out)
        os.replace(os.path.join(args.out, "stream_log.json.tmp"), os.path.join(args.out, "stream_log.json"))

    def check_losses():
        losses = []
        for m in models:
            m["net"].eval()
            total = 0.0
            with torch.no_grad():
                for k in range(0, check_x.shape[0], 64):
                    x = normalise(check_x[k:k + 64])
                    y = check_y[k:k + 64].float() / 255
                    loss, _, _, _ = loss_fn(m["net"].logits(x), y, (check_t[k:k + 64].float(),
                                                                   check_w[k:k + 64].float()), args.corner_weight)
                    total += loss.item() * x.shape[0]
            losses.append(round(total / check_x.shape[0], 5))
        return losses

    budget = args.minutes * 60
    train_start = time.time()
    step, log, last_print, last_save = 0, [], time.time(), time.time()
    while True:
        elapsed = time.time() - train_start
        if elapsed >= budget:
            break
        drain(False)
        x8, y8, t, w = buffer.batch(args.batch, generator)
        x, y, corners = augment_on_device(x8, y8, t, w, generator)
        frac = elapsed / budget
        for m in models:
            lr = learning_rate(m["spec"]["lr"], frac, step, 200)
            for group in m["opt"].param_groups:
                group["lr"] = lr
            train_mode(m["net"], m["frozen"])
            loss, _, _, _ = loss_fn(m["net"].logits(x), y, corners, args.corner_weight, args.junction_weight)
            m["opt"].zero_grad(set_to_none=True)
            loss.backward()
            m["opt"].step()
            value = loss.item()
            m["running"] = value if m["running"] is None else 0.99 * m["running"] + 0.01 * value
        step += 1
        now = time.time()
        if now - last_print >= 20 or now - train_start >= budget:
            entry = {"minutes": round((now - train_start) / 60, 2), "step": step, "scenes": buffer.count,
                     "scenes_per_s": round(buffer.count / (now - started), 1),
                     "steps_per_s": round(step / (now - train_start), 1),
                     "train_loss": [round(m["running"], 5) for m in models], "check_loss": check_losses()}
            log.append(entry)
            print("  ".join(f"{k} {v}" for k, v in entry.items()), flush=True)
            last_print = now
        if now - last_save >= args.checkpoint_seconds:
            save(False)
            last_save = now
    entry = {"minutes": round((time.time() - train_start) / 60, 2), "step": step, "scenes": buffer.count,
             "train_loss": [round(m["running"], 5) for m in models], "check_loss": check_losses()}
    log.append(entry)
    save(True)
    stop.set()
    for proc in procs:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.terminate()
    names = ", ".join(f"{m['spec']['name']} ({m['params']} params): check loss {c}"
                      for m, c in zip(models, entry["check_loss"]))
    print(f"done: {step} steps, {buffer.count} scenes rendered; {names}", flush=True)


if __name__ == "__main__":
    main()
