#!/usr/bin/env python3
"""The engine's tiled direct 3x3 conv against im2col + sgemm on single-Conv models of chosen shapes.

Writes one ONNX model per shape (3x3, pad 1, seeded random weights; tools/conformance/models.py's builder) into
--work, times each with `colorcam bench infer MODEL --runs 30` under COLORCAM_CONV_TILED=0 (sgemm) and =1 (tiled),
--repeat processes each, and prints the least thread-CPU p50 of each with their ratio: the measurement behind
ConvTiledKernel.isPreferred.

    python3 tools/profile/tiled_vs_sgemm.py [--colorcam .build/release/colorcam] [--isa avx2] [--repeat 3]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
from models import single  # noqa: E402  (the conformance suite's model builder)


def conv_model(cin, cout, h, w, path):
    """One 3x3 Conv (pad 1, bias, seeded weights) on a 1 x cin x h x w input."""
    _, model, _ = single(f"c{cin}_{cout}", (1, cin, h, w), lambda b, x: b.conv(x, cin, cout), seed=cin * 1000 + cout)
    onnx.save(model, path)


def cpu_p50_ms(colorcam, model, tiled, isa):
    env = dict(os.environ, COLORCAM_CONV_TILED="1" if tiled else "0")
    if isa:
        env["COLORCAM_ISA"] = isa
    out = subprocess.run([colorcam, "bench", "infer", model, "--runs", "30"], env=env, capture_output=True,
                         text=True, check=True).stdout
    match = re.search(r"cpu p50 ([0-9.]+) ms", out)
    if not match:
        sys.exit(f"tiled_vs_sgemm: no 'cpu p50' in the output of {model}:\n{out}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--colorcam", default=".build/release/colorcam")
    parser.add_argument("--isa", default=None, help="COLORCAM_ISA for the runs (default: the CPU's best)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", default=None, help="folder for the models (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="tiled-vs-sgemm-")
    os.makedirs(work, exist_ok=True)
    shapes = [(cin, cout, h, w) for cout, h, w in ((16, 60, 80), (32, 15, 20), (32, 30, 40), (64, 30, 40))
              for cin in (64, 72, 80, 96, 112, 128)]
    print(f"# {args.colorcam}, COLORCAM_ISA={args.isa or '(CPU)'}; least cpu p50 of {args.repeat} processes, ms")
    for cin, cout, h, w in shapes:
        path = os.path.join(work, f"c{cin}_{cout}_{h}x{w}.onnx")
        conv_model(cin, cout, h, w, path)
        sgemm = min(cpu_p50_ms(args.colorcam, path, False, args.isa) for _ in range(args.repeat))
        tiled = min(cpu_p50_ms(args.colorcam, path, True, args.isa) for _ in range(args.repeat))
        print(f"{cin:4d} -> {cout:3d} at {h}x{w:<3d} K={cin * 9:5d}  sgemm {sgemm:.3f}  tiled {tiled:.3f}  "
              f"tiled/sgemm {tiled / sgemm:.2f}", flush=True)


if __name__ == "__main__":
    main()
