"""How fast one CPU process renders training batches (print_sim.py views), to size the DataLoader workers.

    nice -n 10 python3 tools/train/bench_sampler.py --pack .gpu/color [--seconds 20] [--crop 192] [--reuse 1 4]

Prints, per --reuse value, rendered print views/s and training crops/s of one process with one thread.
"""
import argparse
import json
import os
import random
import time

import cv2
import torch

from colordata import load_data
from train import PrintSampler

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/work/data/color")
    ap.add_argument("--pack")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--crop", type=int, default=192)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--reuse", type=int, nargs="+", default=[1, 4])
    args = ap.parse_args()
    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    split = json.load(open(os.path.join(HERE, "split.json")))
    cache, stamps = load_data(work=args.work, pack=args.pack)
    cache = {pid: cache[pid] for pid in split["train"]}
    for reuse in args.reuse:
        s = PrintSampler(cache, split["train"], stamps, args.crop, random.Random(1), reuse)
        s.batch(args.batch)
        n, t0 = 0, time.process_time()
        while time.process_time() - t0 < args.seconds:
            s.batch(args.batch)
            n += args.batch
        dt = time.process_time() - t0
        print(f"crop {args.crop} reuse {reuse}: {n / reuse / dt:.1f} views/s, {n / dt:.1f} crops/s per process "
              f"(CPU time)", flush=True)


if __name__ == "__main__":
    main()
