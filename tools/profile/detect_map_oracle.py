#!/usr/bin/env python3
"""What the detector's geometry makes of perfect maps: the learned front-end's interior and edge maps replaced by the
training targets (an oracle), scored like detect_heldout.py, beside the CNN's own maps.

  detect_map_oracle.py --oracle-colorcam BIN [--split train --seed 90 --count 300 --texture-instances 9000:10000]
                       [--maps target,interior,edge,cnn] [--detect-model DIR] [--colorcam BIN] [--workers 2]
                       [--sheet OUT.png] [--hands plain|arms]
  detect_map_oracle.py --build            # builds BIN (.build/oracle-build/release/colorcam) and exits

BIN is colorcam with tools/profile/detect-map-oracle.patch applied (a diagnostic, never part of the product): with
$COLORCAM_ORACLE_MAPS=PREFIX set it reads the interior and edge planes from PREFIX.coarse (the frame grid's cells)
and PREFIX.fine (the close-look grid's cells, 2 px at 640 x 480, over the whole frame) instead of the CNN's.
--build applies the patch to a detached worktree of HEAD (.build/oracle-src) and builds it there (a full release
build: minutes).

--maps, one column each (the targets are dr_render.target_planes, the training targets' planes, at each grid's cell):
  target    both planes are the targets: the geometry's ceiling on these scenes
  interior  the interior plane is the target, the edge plane the CNN's (run by onnxruntime on the same cell means)
  edge      the edge plane is the target, the interior plane the CNN's
  cnn       both planes the CNN's, through the same file path: checks the injection against the plain binary's column
--sheet draws the worst scenes of the first --maps column (misses first; truth green, detections red), as
detect_heldout.py --sheet does for the product: with --maps target, what the geometry misses given perfect maps.
The plain binary (--colorcam, the product, with --detect-model) is the first column; --detect-model (a bundle
directory, default Models/detect-default) is also the CNN of the interior, edge and cnn columns. Buckets as
detect_heldout.py. Scenes: the same rendered sets as detect_heldout.py (.build/dr-SPLIT-SEED-COUNT[-tLO-HI]).
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import detect_heldout as dh  # noqa: E402
import dr_render  # noqa: E402

MODES = ("target", "interior", "edge", "cnn")


class CNN:
    """The shipped segmenter run by onnxruntime on a grid of `cell` px (the same inputs colorcam gives it)."""

    def __init__(self, bundle):
        import onnxruntime as ort
        manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        self.session = ort.InferenceSession(os.path.join(bundle, manifest["file"]),
                                            providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name
        self.multiple = manifest["multiple"]

    def maps(self, rgb, cell):
        y, cb, cr = dr_render.cnn_cell_means(rgb, cell)
        gh, gw = y.shape
        x = np.stack([y / 255 - 0.5, (cb - 128) / 128, (cr - 128) / 128]).astype(np.float32)
        ph, pw = -(-gh // self.multiple) * self.multiple, -(-gw // self.multiple) * self.multiple
        x = np.pad(x, ((0, 0), (0, ph - gh), (0, pw - gw)), mode="edge")[None]
        return self.session.run(None, {self.input: x})[0][0, :2, :gh, :gw].astype(np.float32)


def detect_with_maps(binary, truth, directory, mode, workers, cnn, work, extra):
    def one(index_scene):
        index, scene = index_scene
        width, height = scene["width"], scene["height"]
        coarse_cell = dr_render.cell_px(width, height)
        prefix = os.path.join(work, f"{mode}-{index:05d}")
        corners = [p["corners"] for p in scene["photos"]]
        rgb = cv2.imread(os.path.join(directory, scene["file"]))[..., ::-1] if mode != "target" else None
        fine_cell = coarse_cell // 2 // 2 * 2  # the close look's cells (CNNPrintSegmenter.closeLookGrid)
        for cell, suffix in ((coarse_cell, ".coarse"), (fine_cell, ".fine")):
            maps = dr_render.target_planes(corners, width, height, cell) if mode != "cnn" else None
            if mode != "target":
                own = cnn.maps(rgb, cell)
                if mode == "cnn":
                    maps = own
                else:
                    maps[1 if mode == "interior" else 0] = own[1 if mode == "interior" else 0]
            with open(prefix + suffix, "wb") as handle:
                handle.write(np.ascontiguousarray(maps).tobytes())
        env = dict(os.environ, COLORCAM_ORACLE_MAPS=prefix)
        out = subprocess.run([binary, "detect", os.path.join(directory, scene["file"]), "--json"] + extra,
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            raise SystemExit(f"{binary} detect failed on {scene['file']} ({mode}): {out.stderr.strip()}")
        if "oracle maps: " not in out.stderr:
            raise SystemExit(f"{binary}: not built with detect-map-oracle.patch (it read no maps; see --build)")
        for suffix in (".coarse", ".fine"):
            os.remove(prefix + suffix)
        return [d["corners"] for d in json.loads(out.stdout.strip().splitlines()[-1])["detections"]]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, enumerate(truth["scenes"])))


def build():
    src, scratch = os.path.join(ROOT, ".build/oracle-src"), os.path.join(ROOT, ".build/oracle-build")
    if os.path.exists(src):
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", src], check=True)
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", src, "HEAD"], check=True)
    subprocess.run(["git", "-C", src, "apply", os.path.join(HERE, "detect-map-oracle.patch")], check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "colorcam", "--package-path", src,
                    "--scratch-path", scratch], check=True)
    print(os.path.join(scratch, "release", "colorcam"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="store_true", help="build the patched binary and exit")
    ap.add_argument("--oracle-colorcam", help="colorcam built with detect-map-oracle.patch")
    ap.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    ap.add_argument("--split", choices=["heldout", "train"], default="train")
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=90)
    ap.add_argument("--texture-instances", default="9000:10000", metavar="LO:HI")
    ap.add_argument("--maps", default="target,interior,edge,cnn")
    ap.add_argument("--detect-model", default=os.path.join(ROOT, "Models/detect-default"), metavar="DIR")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sheet", metavar="OUT.png")
    ap.add_argument("--hands", choices=dr_render.HAND_STYLES, default="plain",
                    help="the scenes' hands, as detect_heldout.py --hands (arms: each hand with a forearm to the "
                         "frame's edge; the targets stay the whole print under it)")
    args = ap.parse_args()
    if args.build:
        return build()
    if not args.oracle_colorcam:
        ap.error("--oracle-colorcam BIN is needed (see --build)")
    modes = [m for m in args.maps.split(",") if m]
    if any(m not in MODES for m in modes):
        ap.error(f"--maps: each of {', '.join(MODES)}")
    instances = args.texture_instances if args.split == "train" else ""
    directory = dh.scene_dir(args.split, args.seed, args.count, instances, args.hands)
    truth = dh.ensure_scenes(args.count, args.seed, directory, args.split, instances, args.hands)
    if not any(s["photos"] for s in truth["scenes"]):
        raise SystemExit("detect_map_oracle: the rendered set holds no prints")
    work = os.path.join(directory, "oracle-maps")
    os.makedirs(work, exist_ok=True)
    if not os.path.exists(os.path.join(args.detect_model, "manifest.json")):
        ap.error(f"--detect-model {args.detect_model}: no manifest.json there (a detect bundle directory)")
    extra = ["--detect-model", args.detect_model]
    cnn = CNN(args.detect_model) if any(m != "target" for m in modes) else None
    results = {"colorcam": dh.score(truth, dh.detect_all(args.colorcam, extra, truth, directory, args.workers))}
    for mode in modes:
        results[mode] = dh.score(truth, detect_with_maps(args.oracle_colorcam, truth, directory, mode, args.workers,
                                                         cnn, work, extra))
    if args.sheet:
        dh.sheet(args.sheet, directory, results[modes[0]]["worst"])
    names = list(results)
    print(f"{args.split} stills: {len(truth['scenes'])} (seed {args.seed}, {results['colorcam']['truths']} prints); "
          f"recall at Jaccard >= 0.9; columns: the product, then the geometry given these maps")
    print(f"{'':>18}" + "".join(f"{n:>11}" for n in names))
    for label, key in (("overall recall", "recall"), ("precision", "precision"), ("recall at JI>=0.8", "recall_ji08")):
        print(f"{label:>18}" + "".join(f"{100 * results[n][key]:>10.1f}%" for n in names))
    for b in dh.BUCKETS:
        v0 = results[names[0]]["buckets"][b]
        cells = [f"{100 * results[n]['buckets'][b]['recall']:>10.1f}%" if v0["recall"] is not None else f"{'-':>11}"
                 for n in names]
        print(f"{b + ' (' + str(v0['n']) + ')':>18}" + "".join(cells))


if __name__ == "__main__":
    main()
