#!/usr/bin/env python3
"""Where `localChangeThreshold` (Sources/PhotoPipeline: the most changed block of
`thumbnailBlockChanges`) should lie, on rendered hand clips.

  local_change_calibration.py CLIP_DIR...   (clips of tools/scenes/dr_render.py hands, e.g. keepsake_check.py's --out)

For each clip it takes the covered print's thumbnail (32 x 32 luma cells through its truth corners, as the product
samples it) at frame 2, with the hand on it, and at the clip's last frame, with the hand gone, and prints the local
change between them (the measure the product uses, re-stated here with numpy: contrast-normalised cells, each
counted by how far it lies outside the other's 3 x 3 range, both ways, averaged over 8 x 8 blocks, the largest
block). Beside it, the same still print twice with every corner jittered by up to 1 and 2 px (5 draws, the largest):
the noise a threshold must stay above. Choose on training-split clips only.
"""
import json
import os
import sys

import cv2
import numpy as np


def read_luma(path):
    data = open(path, "rb").read()
    end = data.index(b"\n")
    head = data[:end].decode().split()
    w = int(next(t for t in head if t[0] == "W")[1:])
    h = int(next(t for t in head if t[0] == "H")[1:])
    frames, pos = [], end + 1
    while pos < len(data):
        pos = data.index(b"\n", pos) + 1
        frames.append(np.frombuffer(data, np.uint8, w * h, pos).reshape(h, w))
        pos += w * h * 3 // 2
    return frames


def thumbnail(luma, corners, jitter=0.0, rng=None):
    c = np.float32(corners)
    if jitter:
        c = c + rng.uniform(-jitter, jitter, c.shape).astype(np.float32)
    h = cv2.getPerspectiveTransform(c, np.float32([[0, 0], [64, 0], [64, 64], [0, 64]]))
    return cv2.resize(cv2.warpPerspective(luma.astype(np.float32), h, (64, 64)), (32, 32), interpolation=cv2.INTER_AREA)


def local_change(a, b):
    def norm(v):
        return (v - v.mean()) / max(v.std(), 1e-3)
    a, b = norm(a), norm(b)
    kernel = np.ones((3, 3), np.uint8)

    def outside(x, y):
        return np.maximum(0, np.maximum(x - cv2.dilate(y, kernel), cv2.erode(y, kernel) - x))
    return float(np.maximum(outside(a, b), outside(b, a)).reshape(8, 4, 8, 4).mean((1, 3)).max())


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    rng = np.random.default_rng(0)
    print("clip          style      hand cover  hand->gone  still, 1 px  still, 2 px")
    for clip in sys.argv[1:]:
        truth = json.load(open(os.path.join(clip, "truth.json")))
        frames = read_luma(os.path.join(clip, "sequence.y4m"))
        k = truth["hand_print"]
        corners = truth["frames"][0]["photos"][k]["corners"]
        covered, gone = thumbnail(frames[2], corners), thumbnail(frames[-1], corners)
        noise = [max(local_change(gone, thumbnail(frames[-5], corners, j, rng)) for _ in range(5)) for j in (1.0, 2.0)]
        print(f"{os.path.basename(clip):13s} {truth['frames'][0]['photos'][k]['style']:10s} "
              f"{truth['frames'][2]['photos'][k]['hand_cover']:10.3f}  {local_change(covered, gone):10.2f}  "
              f"{noise[0]:11.2f}  {noise[1]:11.2f}")


if __name__ == "__main__":
    main()
