#!/usr/bin/env python3
"""Writes what a correct `colorcam replay` output of the demo scene looks like, made from the ground truth: a
known-good input for check_output.py's tests and a reference for what its L check can expect.

    python3 tools/demo/reference_output.py --scene demo/scene.y4m --truth demo/truth.json --photos DIR
                                           --background gray|original --out OUT.y4m

DIR holds colorized photos in the --save-photos format (tools/demo/reference_save.py writes them; track k is the
truth's k-th print). Per frame: luma is the input's; chroma is 128 (gray) or the input's (original), except in the
chroma samples whose 2×2 block has a pixel inside a print's true quad. There the photo's a, b (CIE Lab, skimage),
warped through the true corners (bilinear), are recombined with the frame's own L (decoded with nearest chroma,
as check_output.py does), converted to sRGB and encoded BT.601 full range — luma per pixel, chroma from the 2×2
average of R'G'B' (as Sources/Stream/RGBToYCbCr.swift). Then, because a 2×2 block shares one chroma sample, each
inside pixel's luma is re-chosen so that its decode with the block's chroma has the L closest to the live L
(fit_luma; --naive-luma skips this and keeps the encoder's luma, whose decoded L is off by up to ~3 units at colour
edges). Pixels outside the quads but in such a block keep their input luma. No feathering, tracking or lag.
"""
import argparse
import json
import os
import sys

import cv2
import numpy as np
from skimage.color import lab2rgb, rgb2lab

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import render  # noqa: E402
from check_output import cie_l, quad_mask  # noqa: E402
from y4m import Y4MReader, samples_to_rgb, ycbcr_to_rgb  # noqa: E402


def encode(rgb, y_in, cb_out, cr_out, pixel_mask):
    """Writes the BT.601 full-range encoding of `rgb` (H×W×3 float 0..255) into the output planes: luma where
    pixel_mask, chroma (2×2 average of R'G'B') in every sample whose block touches pixel_mask."""
    h, w = y_in.shape
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    luma = np.clip(0.299 * r + 0.587 * g + 0.114 * b + 0.5, 0, 255).astype(np.uint8)
    y_out = np.where(pixel_mask, luma, y_in)
    ch, cw = cb_out.shape
    padded = np.pad(rgb, ((0, 2 * ch - h), (0, 2 * cw - w), (0, 0)), mode="edge")
    mean = padded.reshape(ch, 2, cw, 2, 3).mean(axis=(1, 3))
    cb = np.clip(128 - 0.168736 * mean[..., 0] - 0.331264 * mean[..., 1] + 0.5 * mean[..., 2] + 0.5, 0, 255)
    cr = np.clip(128 + 0.5 * mean[..., 0] - 0.418688 * mean[..., 1] - 0.081312 * mean[..., 2] + 0.5, 0, 255)
    touched = np.zeros((2 * ch, 2 * cw), bool)
    touched[:h, :w] = pixel_mask
    touched = touched.reshape(ch, 2, cw, 2).any(axis=(1, 3))
    cb_out[touched] = cb.astype(np.uint8)[touched]
    cr_out[touched] = cr.astype(np.uint8)[touched]
    return y_out


def fit_luma(y_out, cb_out, cr_out, rows, cols, target_l):
    """Per pixel (rows, cols), the luma code whose decode with the block's final chroma (nearest upsampling) has
    the CIE L closest to target_l: an 8-step binary search (L rises with luma at fixed chroma), then the nearer
    of the two neighbours. Writes into y_out."""
    u, v = cb_out[rows // 2, cols // 2], cr_out[rows // 2, cols // 2]

    def l_of(code):
        return cie_l(samples_to_rgb(code, u, v))

    low, high = np.zeros(len(rows), np.int32), np.full(len(rows), 255, np.int32)
    while (low < high).any():
        mid = (low + high) // 2
        below = l_of(mid) < target_l
        low, high = np.where(below, mid + 1, low), np.where(below, high, mid)
    lower = np.maximum(low - 1, 0)
    pick = np.where(np.abs(l_of(lower) - target_l) < np.abs(l_of(low) - target_l), lower, low)
    y_out[rows, cols] = pick.astype(np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scene", required=True)
    parser.add_argument("--truth", required=True)
    parser.add_argument("--photos", required=True)
    parser.add_argument("--background", choices=["gray", "original"], required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--naive-luma", action="store_true",
                        help="keep the luma of the Lab → sRGB → Y'CbCr encode (no fit to the 4:2:0 chroma)")
    args = parser.parse_args()
    truth = json.load(open(args.truth))
    ab_by_print = {}
    for track, p in enumerate(truth["prints"], start=1):
        bgr = cv2.imread(os.path.join(args.photos, f"photo-{track}.png"), cv2.IMREAD_COLOR)
        if bgr is None:
            sys.exit(f"reference_output: {args.photos}/photo-{track}.png: missing or unreadable")
        ab_by_print[p["print"]] = rgb2lab(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB) / 255.0)[..., 1:].astype(np.float32)
    with Y4MReader(args.scene) as reader, open(args.out + ".tmp", "wb") as out:
        out.write(f"YUV4MPEG2 W{reader.width} H{reader.height} F{truth['fps']}:1 Ip A1:1 C420jpeg\n".encode())
        h, w = reader.height, reader.width
        for index, (y, cb, cr) in enumerate(reader):
            cb_out = cb.copy() if args.background == "original" else np.full_like(cb, 128)
            cr_out = cr.copy() if args.background == "original" else np.full_like(cr, 128)
            ab = np.zeros((h, w, 2), np.float32)
            inside = np.zeros((h, w), bool)
            for photo in truth["frames"][index]["photos"]:
                source = ab_by_print[photo["print"]]
                sh, sw = source.shape[:2]
                rect = np.array([[0, 0], [sw, 0], [sw, sh], [0, sh]], np.float32)
                hmat = cv2.getPerspectiveTransform(rect, np.asarray(photo["corners"], np.float32)).astype(np.float64)
                warped = cv2.warpPerspective(source, render.cv_matrix(hmat), (w, h), flags=cv2.INTER_LINEAR,
                                             borderMode=cv2.BORDER_REPLICATE)
                mask = quad_mask(photo["corners"], h, w).astype(bool)
                ab[mask] = warped[mask]
                inside |= mask
            y_out = y
            if inside.any():
                rgb = ycbcr_to_rgb(y, cb, cr)
                rows, cols = np.nonzero(inside)
                live_l = cie_l(rgb[rows, cols])
                lab = np.concatenate([live_l[:, None], ab[rows, cols]], axis=1)
                rgb[rows, cols] = lab2rgb(lab[:, None, :])[:, 0, :] * 255.0
                y_out = encode(rgb, y, cb_out, cr_out, inside)
                if not args.naive_luma:
                    fit_luma(y_out, cb_out, cr_out, rows, cols, live_l)
            out.write(b"FRAME\n" + y_out.tobytes() + cb_out.tobytes() + cr_out.tobytes())
    os.replace(args.out + ".tmp", args.out)
    print(f"reference_output: wrote {args.out} ({args.background} background)")


if __name__ == "__main__":
    main()
