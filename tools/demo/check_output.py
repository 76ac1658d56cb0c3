#!/usr/bin/env python3
"""Checks colorcam's demo output frame by frame against its input and the scene's ground truth.

    python3 tools/demo/check_output.py --input demo/scene.y4m --output demo/out.y4m --truth demo/truth.json
                                       --background gray|original [--margin-px 6] [--inner-margin-px 3]
                                       [--dl-limit 1.0] [--dl-percentile 99.9] [--chroma-threshold 3] [--json]

Output frames are matched to input frames by their Xts_us FRAME tags (colorcam replay copies the source time; the
demo scene writes one per frame), so frames a realtime replay dropped are skipped; untagged output frame n is input
frame n, and then the counts must agree. Sizes must agree. Masks come from truth.json's
corners (a pixel belongs to a quad when its centre does):
  - outside: pixels farther than --margin-px (default 6, a square dilation) from every print's quad. The margin
    absorbs the tracker's corner error and the compositor's feathered edge. Luma must equal the input's exactly;
    chroma (a 4:2:0 sample counts as outside when its whole 2×2 luma block is outside) must equal the input's
    (--background original) or be 128 (gray);
  - inside: each print's quad eroded by --inner-margin-px (default 3). The CIE L of the output must match the input's:
    the --dl-percentile (default 99.9; 100 = the maximum) of |ΔL| over all inside pixels of all frames must be
    ≤ --dl-limit (default 1.0). L comes from decoding Y'CbCr with the BT.601 full-range matrix colorcam uses
    (tools/demo/y4m.py), chroma replicated over each 2×2 block, then sRGB → CIE L (D65, skimage's constants).
Reported, not checked: per print, the share of its still, in-view frames whose inside has colour (mean chroma
distance from (128, 128) over the inside chroma samples > --chroma-threshold), and the first such frame.
Exit 0 when every check passes, 1 when one fails (the first failing frames are listed), 65/66 on bad input.
"""
import argparse
import json
import os
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from y4m import Y4MError, Y4MReader, ycbcr_to_rgb  # noqa: E402

Y_FROM_LINEAR_RGB = np.array([0.212671, 0.715160, 0.072169])  # skimage's sRGB → XYZ row for Y (white Y = 1)


def bad_input(message, code=65):
    sys.stderr.write(f"check_output: {message}\n")
    sys.exit(code)


def cie_l(rgb255):
    """CIE L (0..100) of sRGB values 0..255, shape (..., 3); float32 arithmetic (errors < 1e-3 L units)."""
    c = np.asarray(rgb255, np.float32) * np.float32(1 / 255)
    linear = np.where(c > 0.04045, ((c + np.float32(0.055)) * np.float32(1 / 1.055)) ** np.float32(2.4),
                      c * np.float32(1 / 12.92))
    y = linear @ Y_FROM_LINEAR_RGB.astype(np.float32)
    f = np.where(y > 0.008856, np.cbrt(y), np.float32(7.787) * y + np.float32(16.0 / 116.0))
    return np.float32(116.0) * f - np.float32(16.0)


def quad_mask(corners, height, width):
    """uint8 mask of the pixels whose centres lie in the quad (continuous coordinates, pixel i's centre at i + 0.5)."""
    mask = np.zeros((height, width), np.uint8)
    points = np.round((np.asarray(corners, np.float64) - 0.5) * 16).astype(np.int32)
    cv2.fillConvexPoly(mask, points, 1, shift=4)
    return mask


def disk(radius):
    return cv2.getStructuringElement(cv2.MORPH_RECT, (2 * radius + 1, 2 * radius + 1))


def block_all(mask, chroma_h, chroma_w):
    """Chroma-sized bool: all of the sample's 2×2 luma block is set (edge blocks: the pixels that exist)."""
    h, w = mask.shape
    padded = np.ones((2 * chroma_h, 2 * chroma_w), bool)
    padded[:h, :w] = mask.astype(bool)
    return padded.reshape(chroma_h, 2, chroma_w, 2).all(axis=(1, 3))


def aligned_pairs(source, result, args):
    """Yields (input frame index, input planes, output planes). An output frame with an Xts_us tag is matched to
    the input frame with the same tag (or, when the input has none, the frame at round(Xts_us × fps)): input frames
    the output dropped are skipped. Untagged output frames pair with input frames in order."""
    inputs = enumerate(source)
    fps = frame_rate(source)
    for ordinal, b in enumerate(result):
        wanted = result.timestamp_us
        while True:
            item = next(inputs, None)
            if item is None:
                bad_input(f"{args.output}: output frame {ordinal} " + (f"(Xts_us={wanted}) " if wanted is not None
                          else "") + f"has no input frame in {args.input} (out of order, or more output than input)")
            index, a = item
            if wanted is None:
                break
            mine = source.timestamp_us if source.timestamp_us is not None else round(index * 1e6 / fps)
            if mine == wanted:
                break
            if mine > wanted:
                bad_input(f"{args.output}: output frame {ordinal} has Xts_us={wanted}, which no input frame has")
        yield index, a, b


def frame_rate(reader):
    try:
        num, den = reader.fps.split(":")
        return int(num) / int(den)
    except (ValueError, ZeroDivisionError):
        return 30.0


def compare_frame(index, a, b, photos, shape, source, args, failures, dl_values, colour):
    """Checks one frame pair; appends to failures (outside mismatches), dl_values (|ΔL| inside) and colour."""
    height, width = shape
    outer = disk(args.margin_px)
    inner = disk(args.inner_margin_px) if args.inner_margin_px > 0 else None
    near = np.zeros((height, width), np.uint8)
    insides = []
    for photo in photos:
        mask = quad_mask(photo["corners"], height, width)
        near |= mask
        insides.append(cv2.erode(mask, inner) if inner is not None else mask)
    near = cv2.dilate(near, outer) if args.margin_px > 0 else near
    outside = near == 0
    chroma_outside = block_all(outside, source.chroma_h, source.chroma_w)
    (y_in, cb_in, cr_in), (y_out, cb_out, cr_out) = a, b
    bad_luma = int(np.count_nonzero((y_in != y_out) & outside))
    if args.background == "original":
        want_cb, want_cr = cb_in, cr_in
    else:
        want_cb = want_cr = np.uint8(128)
    bad_chroma = int(np.count_nonzero(((cb_out != want_cb) | (cr_out != want_cr)) & chroma_outside))
    if bad_luma or bad_chroma:
        wrong = np.argwhere(((y_in != y_out) & outside))
        failures.append({"frame": index, "luma_px": bad_luma, "chroma_samples": bad_chroma,
                         "max_luma_diff": int(np.abs(y_in.astype(int) - y_out)[outside].max()),
                         "first_luma_px_xy": wrong[0][::-1].tolist() if len(wrong) else None,
                         "prints_moving": [p["print"] for p in photos if p["moving"]]})
    any_inside = np.zeros((height, width), bool)
    for photo, inside in zip(photos, insides):
        any_inside |= inside.astype(bool)
        samples = block_all(inside, source.chroma_h, source.chroma_w)
        if photo["in_frame"] and not photo["moving"] and samples.any():
            distance = np.hypot(cb_out[samples].astype(float) - 128, cr_out[samples].astype(float) - 128)
            c = colour[photo["print"]]
            c["still"] += 1
            if distance.mean() > args.chroma_threshold:
                c["coloured"] += 1
                c["first"] = index if c["first"] is None else c["first"]
    if any_inside.any():
        rows, cols = np.nonzero(any_inside)
        l_in = cie_l(ycbcr_to_rgb(y_in, cb_in, cr_in, rows, cols))
        l_out = cie_l(ycbcr_to_rgb(y_out, cb_out, cr_out, rows, cols))
        dl_values.append(np.abs(l_out - l_in).astype(np.float32))


def frame_ranges(indices):
    """[3, 4, 5, 9] → "3–5, 9"."""
    spans = []
    for i in indices:
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in spans)


def check(args):
    try:
        truth = json.load(open(args.truth))
        frames_truth = truth["frames"]
    except OSError as error:
        bad_input(f"{args.truth}: cannot read ({error.strerror})", 66)
    except (ValueError, KeyError, TypeError) as error:
        bad_input(f"{args.truth}: not a scene truth file ({error})")
    for path in (args.input, args.output):
        if not os.path.exists(path):
            bad_input(f"{path}: no such file", 66)
    try:
        source, result = Y4MReader(args.input), Y4MReader(args.output)
    except Y4MError as error:
        bad_input(str(error))
    if (source.width, source.height) != (result.width, result.height):
        bad_input(f"{args.output}: {result.width}x{result.height}, but the input is {source.width}x{source.height}")
    if (source.width, source.height) != (truth["width"], truth["height"]):
        bad_input(f"{args.truth}: for {truth['width']}x{truth['height']}, but the input is "
                  f"{source.width}x{source.height}")
    height, width = source.height, source.width
    failures, dl_values, count = [], [], 0
    colour = {p["print"]: {"still": 0, "coloured": 0, "first": None} for p in truth["prints"]}
    tagged = None
    try:
        for index, a, b in aligned_pairs(source, result, args):
            if index >= len(frames_truth):
                bad_input(f"{args.input}: more frames than {args.truth} describes ({len(frames_truth)})")
            tagged = result.timestamp_us is not None
            count += 1
            compare_frame(index, a, b, frames_truth[index]["photos"], (height, width), source, args,
                          failures, dl_values, colour)
            if not args.quiet and count % 100 == 0:
                sys.stderr.write(f"check_output: {count} frames compared\n")
        input_frames = index + 1 + sum(1 for _ in source) if count else sum(1 for _ in source)
    except Y4MError as error:
        bad_input(str(error))
    if input_frames != len(frames_truth):
        bad_input(f"{args.input} holds {input_frames} frames but {args.truth} describes {len(frames_truth)}")
    if not tagged and count != input_frames:
        bad_input(f"frame counts differ: {args.output} holds {count} frames, {args.input} {input_frames}, and the "
                  f"output's FRAME lines carry no Xts_us to match them by (replay with --pace asap, or keep the tags)")
    dl = np.concatenate(dl_values) if dl_values else np.zeros(1, np.float32)
    dl_at = float(np.percentile(dl, args.dl_percentile))
    report = {
        "frames": count, "input_frames": input_frames, "matched_by": "Xts_us" if tagged else "order",
        "background": args.background, "margin_px": args.margin_px,
        "inner_margin_px": args.inner_margin_px,
        "outside": {"frames_exact": count - len(failures), "frames_failing": len(failures),
                    "luma_px": sum(f["luma_px"] for f in failures),
                    "chroma_samples": sum(f["chroma_samples"] for f in failures),
                    "failing_frames": frame_ranges([f["frame"] for f in failures]), "first_failures": failures[:10]},
        "inside_dl": {"pixels": int(dl.size) if dl_values else 0, "max": float(dl.max()),
                      "p99_9": float(np.percentile(dl, 99.9)), "mean": float(dl.mean()),
                      "checked_percentile": args.dl_percentile, "at_percentile": dl_at, "limit": args.dl_limit},
        "colour": {k: {"still_frames": v["still"], "coloured_fraction": v["coloured"] / v["still"] if v["still"] else 0,
                       "first_coloured_frame": v["first"]} for k, v in colour.items()},
    }
    report["pass"] = not failures and dl_at <= args.dl_limit
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, help="the scene .y4m colorcam read")
    parser.add_argument("--output", required=True, help="the .y4m colorcam wrote")
    parser.add_argument("--truth", required=True)
    parser.add_argument("--background", choices=["gray", "original"], required=True)
    parser.add_argument("--margin-px", type=int, default=6)
    parser.add_argument("--inner-margin-px", type=int, default=3)
    parser.add_argument("--dl-limit", type=float, default=1.0)
    parser.add_argument("--dl-percentile", type=float, default=99.9)
    parser.add_argument("--chroma-threshold", type=float, default=3.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    report = check(args)
    if args.json:
        print(json.dumps(report))
    else:
        o, d = report["outside"], report["inside_dl"]
        print(f"check_output: {report['frames']} of {report['input_frames']} input frames compared (matched by "
              f"{report['matched_by']}), background {report['background']}, outside = more than "
              f"{report['margin_px']} px from every print, inside = prints eroded by {report['inner_margin_px']} px")
        print(f"outside prints: {o['frames_exact']}/{report['frames']} frames exact "
              f"({o['luma_px']} luma px and {o['chroma_samples']} chroma samples differ)"
              + (f"; failing frames {o['failing_frames']}" if o["failing_frames"] else ""))
        for f in o["first_failures"]:
            print(f"  frame {f['frame']}: {f['luma_px']} luma px (max |diff| {f['max_luma_diff']}, first at "
                  f"{f['first_luma_px_xy']}), {f['chroma_samples']} chroma samples; moving prints {f['prints_moving']}")
        print(f"inside prints: |ΔL| max {d['max']:.3f}, p99.9 {d['p99_9']:.3f}, mean {d['mean']:.4f} over "
              f"{d['pixels']} px; p{d['checked_percentile']:g} {d['at_percentile']:.3f} (limit {d['limit']})")
        for k, c in report["colour"].items():
            print(f"colour in print {k}: {c['coloured_fraction']:.1%} of its {c['still_frames']} still frames, "
                  f"first at frame {c['first_coloured_frame']}")
        print("verdict: " + ("PASS" if report["pass"] else "FAIL"))
    if not report["pass"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
