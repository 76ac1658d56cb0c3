#!/usr/bin/env python3
"""Keepsakes without hands: the photo `--save-photos` keeps of each print must be a view with nothing over it.

  keepsake_check.py [--count 6] [--seed 31] [--split heldout] [--colorcam BIN] [--out DIR] [--max-cover 0.005]
                    [--sheet OUT.png] [--reverse]

Renders `--count` clips with tools/scenes/dr_render.py hands (still prints, a hand lying over one of them for the
first 15–30 frames, then drawn away), replays each with `colorcam replay --pace asap --save-photos`, and looks each
saved photo up in the generator's truth: the print it shows (the truth print whose outline at the saved view's frame
overlaps the saved corners most) and how much of it the hand covered in that frame. Prints one line per clip and a
summary. It also measures whether the hand kept its own colour in the output while it lay still on a black-and-white
or toned print (replayed with --background original; frames 5 on, pixels the hand fully covers: the share whose
chroma is the input's within 1 level, i.e. not painted with the model's colours; `--min-hand-kept` fails below it).
Exits 1 when a saved photo of a black-and-white or toned print shows more than --max-cover of it under the hand, or
when no covered print was ever saved (the check would then say nothing). --sheet draws each clip's covered print as
it was saved, worst (most covered) first: the camera frame of the saved view (truth outline green) beside the saved
photo. Colour prints are reported apart
and do not fail the check: colorcam tells what lies over a print by its one tone, which a colour print has not.
--reverse replays each clip backwards (reversed.y4m beside it): the print is clear first, then the hand arrives and
lies still to the end, so the keepsake must stay the clear view it had, and the hand colour is measured over the
still frames at the end.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import cv2  # noqa: E402
import metrics  # noqa: E402
import numpy as np  # noqa: E402


def check_clip(args, seed, out):
    clip = os.path.join(out, f"clip-{seed}")
    truth_path = os.path.join(clip, "truth.json")
    if not os.path.exists(truth_path):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools/scenes/dr_render.py"), "hands", "--split",
                        args.split, "--seed", str(seed), "--out", clip], check=True)
    truth = json.load(open(truth_path))
    photos_dir = os.path.join(clip, "photos")
    subprocess.run(["rm", "-rf", photos_dir], check=True)
    output = os.path.join(clip, "out.y4m")
    sequence = os.path.join(clip, "sequence.y4m")
    if args.reverse:
        sequence = reverse_clip(clip, truth)
    run = subprocess.run([args.colorcam, "replay", sequence, "--pace", "asap",
                          "--save-photos", photos_dir, "--output", output, "--background", "original", "--quiet"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"clip {seed}: colorcam replay failed ({run.returncode}): {run.stderr.strip()}")
    saved = []
    for path in sorted(glob.glob(os.path.join(photos_dir, "photo-*.json"))):
        photo = json.load(open(path))
        frame = truth["frames"][photo["frame"]]
        ious = [metrics.quad_iou(photo["corners"], p["corners"]) for p in frame["photos"]]
        best = max(range(len(ious)), key=lambda i: ious[i])
        saved.append({"file": os.path.basename(path), "frame": photo["frame"], "print": best, "iou": ious[best],
                      "hand_cover": frame["photos"][best]["hand_cover"], "covered_measured": photo.get("covered"),
                      "colour": frame["photos"][best]["style"] == "colour"})
    return truth, saved, hand_kept(truth, sequence, output, args.reverse)


def reverse_clip(clip, truth):
    """Writes the clip's frames in reverse order to reversed.y4m and turns `truth` (in place) to match."""
    path = os.path.join(clip, "reversed.y4m")
    data = open(os.path.join(clip, "sequence.y4m"), "rb").read()
    head_end = data.index(b"\n") + 1
    frames, pos = [], head_end
    size = truth["width"] * truth["height"] * 3 // 2
    while pos < len(data):
        start = data.index(b"\n", pos) + 1
        frames.append(data[pos:start + size])
        pos = start + size
    with open(path + ".partial", "wb") as out:
        out.write(data[:head_end])
        for frame in reversed(frames):
            out.write(frame)
    os.replace(path + ".partial", path)
    truth["frames"] = truth["frames"][::-1]
    for i, frame in enumerate(truth["frames"]):
        frame["frame"] = i
    return path


def read_y4m(path, width, height):
    """The frames' (Cb, Cr) planes of a 420jpeg .y4m, as uint8 arrays."""
    data = open(path, "rb").read()
    pos = data.index(b"\n") + 1
    y_size, c_size = width * height, (width // 2) * (height // 2)
    frames = []
    while pos < len(data):
        pos = data.index(b"\n", pos) + 1
        cb = np.frombuffer(data, np.uint8, c_size, pos + y_size).reshape(height // 2, width // 2)
        cr = np.frombuffer(data, np.uint8, c_size, pos + y_size + c_size).reshape(height // 2, width // 2)
        frames.append((cb.astype(np.int16), cr.astype(np.int16)))
        pos += y_size + 2 * c_size
    return frames


def frame_rgb(path, width, height, index):
    """Frame `index` of a 420jpeg .y4m as BGR (for looking at)."""
    data = open(path, "rb").read()
    pos = data.index(b"\n") + 1
    size = width * height * 3 // 2
    for _ in range(index + 1):
        pos = data.index(b"\n", pos) + 1
        start = pos
        pos += size
    yuv = np.frombuffer(data, np.uint8, size, start).reshape(height * 3 // 2, width)
    return cv2.cvtColor(yuv, cv2.COLOR_YUV2BGR_I420)


def write_sheet(path, rows, sequence_name="sequence.y4m"):
    """One row per (hand_cover, clip, truth, saved view): the frame cropped around the print, and the saved photo."""
    tiles = []
    for cover, clip, truth, view in sorted(rows, key=lambda r: -r[0])[:24]:
        corners = np.float32(truth["frames"][view["frame"]]["photos"][view["print"]]["corners"])
        frame = frame_rgb(os.path.join(clip, sequence_name), truth["width"], truth["height"], view["frame"])
        cv2.polylines(frame, [np.round(corners).astype(np.int32)], True, (0, 200, 0), 2)
        x0, y0 = np.maximum(corners.min(0) - 40, 0).astype(int)
        x1, y1 = np.minimum(corners.max(0) + 40, [truth["width"], truth["height"]]).astype(int)
        crop = cv2.resize(frame[y0:y1, x0:x1], (240, 240))
        photo = cv2.resize(cv2.imread(os.path.join(clip, "photos", view["file"].replace(".json", ".png"))), (240, 240))
        tile = np.hstack([crop, photo])
        cv2.putText(tile, f"{os.path.basename(clip)} frame {view['frame']} hand {100 * cover:.1f} %", (4, 16),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
        tiles.append(tile)
    if not tiles:
        return
    while len(tiles) % 2:
        tiles.append(np.zeros_like(tiles[0]))
    cv2.imwrite(path, np.vstack([np.hstack(tiles[i:i + 2]) for i in range(0, len(tiles), 2)]))


def hand_kept(truth, sequence, output, reverse=False):
    """Share of the hand's chroma samples (fully covered, on the covered print) that the output left as they came in,
    frames 5 … the end of the hand's stillness (reversed: its still frames at the end); None for a colour print."""
    target = truth["hand_print"]
    if truth["frames"][0]["photos"][target]["style"] == "colour":
        return None
    w, h = truth["width"], truth["height"]
    hand = cv2.imread(os.path.join(os.path.dirname(sequence), "hand.png"), cv2.IMREAD_GRAYSCALE)
    print_mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(print_mask, np.round(np.float32(truth["frames"][0]["photos"][target]["corners"])).astype(
        np.int32), 1)
    both = (hand >= 250) & (print_mask > 0)
    block = both.reshape(h // 2, 2, w // 2, 2).all(axis=(1, 3))  # chroma samples whose 2x2 pixels are all hand
    if not block.any():
        return None
    before, after = read_y4m(sequence, w, h), read_y4m(output, w, h)
    kept = total = 0
    still = truth["hand_still_frames"]
    for k in (range(len(before) - still, len(before)) if reverse else range(5, still)):
        same = (np.abs(before[k][0] - after[k][0]) <= 1) & (np.abs(before[k][1] - after[k][1]) <= 1)
        kept += int((same & block).sum())
        total += int(block.sum())
    return kept / total if total else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--split", choices=["train", "heldout"], default="heldout")
    ap.add_argument("--colorcam", default=os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam")))
    ap.add_argument("--out", default=os.path.join(ROOT, ".build/keepsake"))
    ap.add_argument("--max-cover", type=float, default=0.005)
    ap.add_argument("--min-hand-kept", type=float, default=None)
    ap.add_argument("--sheet", default=None)
    ap.add_argument("--reverse", action="store_true", help="replay each clip backwards: the hand arrives and stays")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failures, colour_failures, views, covered_prints_saved, kept_shares, sheet_rows = [], [], 0, 0, [], []
    for k in range(args.count):
        seed = args.seed + k
        truth, saved, kept = check_clip(args, seed, args.out)
        sheet_rows += [(s["hand_cover"], os.path.join(args.out, f"clip-{seed}"), truth, s) for s in saved
                       if s["print"] == truth["hand_print"] and not s["colour"]]
        if kept is not None:
            kept_shares.append(kept)
        target = truth["hand_print"]
        hand_saved = [s for s in saved if s["print"] == target]
        covered_prints_saved += bool(hand_saved)
        views += len(saved)
        bad = [s for s in saved if s["hand_cover"] > args.max_cover and not s["colour"]]
        failures += [(seed, s) for s in bad]
        colour_failures += [(seed, s) for s in saved if s["hand_cover"] > args.max_cover and s["colour"]]
        worst = max((s["hand_cover"] for s in saved), default=0.0)
        style = truth["frames"][0]["photos"][target]["style"]
        print(f"clip {seed}: {len(truth['frames'][0]['photos'])} prints, hand over print {target} ({style}) for "
              f"{truth['hand_frames']} frames; {len(saved)} saved; the covered print saved from frame "
              f"{[s['frame'] for s in hand_saved]} (measured cover {[s['covered_measured'] for s in hand_saved]}); "
              f"worst hand cover in a saved view {100 * worst:.1f} %; hand colour kept "
              f"{'n/a' if kept is None else f'{100 * kept:.1f} %'}{'  FAIL' if bad else ''}")
    print(f"keepsakes: {views} saved views in {args.count} clips, {len(failures)} of black-and-white or toned prints "
          f"with the hand over the print (> {100 * args.max_cover:.1f} % of it), {len(colour_failures)} of colour "
          f"prints (not judged); the covered print was saved in {covered_prints_saved} of {args.count} clips")
    if args.sheet:
        write_sheet(args.sheet, sheet_rows, "reversed.y4m" if args.reverse else "sequence.y4m")
    mean_kept = sum(kept_shares) / len(kept_shares) if kept_shares else None
    print(f"hand colour kept while it lay on a black-and-white or toned print: "
          f"{'n/a' if mean_kept is None else f'{100 * mean_kept:.1f} %'} (mean of {len(kept_shares)} clips; "
          f"worst {100 * min(kept_shares) if kept_shares else 0:.1f} %)")
    if failures or covered_prints_saved == 0 or (args.min_hand_kept is not None and (
            mean_kept is None or mean_kept < args.min_hand_kept)):
        sys.exit(1)


if __name__ == "__main__":
    main()
