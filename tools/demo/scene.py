#!/usr/bin/env python3
"""The demo recording: black-and-white prints of the bundled photos on a table, a print placed and one removed.

    python3 tools/demo/scene.py --out demo/scene.y4m --truth demo/truth.json [--seed N] [--photos DIR]
                                [--workers N] [--frames N] [--quiet]

Writes a 10 s 640×480 30 fps `.y4m` (C420jpeg, BT.601 full range, as tools/scenes/render.py's sequences; each
FRAME line carries colorcam's `Xts_us` tag, frame n at n × 10⁶ / 30 µs, truncated) and `truth.json` with every
frame's ground-truth corners (and "timestamp_us"). Deterministic: the same seed gives the same bytes, whatever
--workers (frames render in parallel processes, each frame's noise drawn from its own (seed, frame) generator);
--frames N writes only the first N frames, byte-identical to the full clip's (for tests).

The scene: the three photos of Assets/demo-photos, printed as their greyscale (BT.601 luma of the colour original,
no border, long side PRINT_LONG_PX) on a procedural table (render.py's textures, shadows, lighting, blur and noise;
no occluder, no JPEG), filmed by a camera that drifts gently (≤ 10 px, ≤ 1°, one slow cycle over the clip).
Print roles (which photo plays which, seeded):
  - "static": lies on the table for the whole clip;
  - "removed": lies there from the start and slides out of view (ease-in) from REMOVE_START_S;
  - "placed": slides into view from outside the frame (ease-out) from PLACE_START_S and then lies still.
Prints rest in three of the four cells of a 2×2 grid (seeded jitter and ±6° rotation), ≥ 12 px apart and ≥ 10 px
inside the frame in every frame; the generator checks this and stops with an error if a seed breaks it.

truth.json:
  {"seed", "width", "height", "fps", "frame_count",
   "prints": [{"print": "A", "photo": "schwerin-palace", "file": "schwerin-palace.png", "role": "static|removed|placed",
               "size": [w, h], "first_frame": n, "last_frame": n, "rest_frames": [a, b]}],
   "frames": [{"frame": n, "timestamp_us": t,
               "photos": [{"print", "photo", "corners", "size", "moving", "in_frame"}]}]}
A print is listed in a frame when any part of it is in view; "in_frame" when all of it is; "moving" while it slides.
first_frame/last_frame bound the frames that list it; rest_frames bound the frames where it lies still in full view
(null when a --frames render never shows it).
Corners are pixels, the image spanning [0, W] × [0, H] (pixel i's centre at i + 0.5), clockwise from the corner
nearest the image's top-left, as `colorcam detect --json` reports them.
"""
import argparse
import io
import json
import multiprocessing
import os
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "scenes"))
import render  # noqa: E402  (tools/scenes/render.py: table, camera, compositing, y4m writer)

WIDTH, HEIGHT, FPS, SECONDS = 640, 480, 30, 10
PRINT_LONG_PX = 260          # long side of a print in the table plane (54 % of the frame's short side)
PLACE_START_S, REMOVE_START_S, SLIDE_S = 2.5, 6.5, 1.2
SLIDE_PX = 420               # how far a print slides (table-plane px): from fully out of view to its cell
EDGE_MARGIN_PX, GAP_PX = 10, 12


def fail(message, code=65):
    sys.stderr.write(f"scene: {message}\n")
    sys.exit(code)


def load_photos(folder):
    """The bundled colour originals, sorted by name: [(stem, file name, uint8 RGB)]."""
    if not os.path.isdir(folder):
        fail(f"{folder}: no such folder (the bundled photos, Assets/demo-photos)", 66)
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith(".png"))
    if len(names) < 3:
        fail(f"{folder}: needs 3 PNG photos, found {len(names)}", 66)
    photos = []
    for name in names[:3]:
        bgr = cv2.imread(os.path.join(folder, name), cv2.IMREAD_COLOR)
        if bgr is None:
            fail(f"{os.path.join(folder, name)}: not a readable PNG", 65)
        photos.append((os.path.splitext(name)[0], name, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    return photos


def grey_print(rgb):
    """A black-and-white print of a colour photo: BT.601 luma, long side PRINT_LONG_PX, float32 RGB."""
    grey = rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    h, w = grey.shape
    scale = PRINT_LONG_PX / max(h, w)
    size = (int(round(w * scale)), int(round(h * scale)))
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    return np.repeat(small[..., None], 3, axis=2)


def rest_pose(rng, cell, image):
    """Table-plane homography (print px → table px) of a print resting in grid cell (column, row)."""
    ph, pw = image.shape[:2]
    cx = WIDTH * (0.25 + 0.5 * cell[0]) + rng.uniform(-8, 8)
    cy = HEIGHT * (0.25 + 0.5 * cell[1]) + rng.uniform(-6, 6)
    angle = np.radians(rng.uniform(-6, 6))
    c, s = np.cos(angle), np.sin(angle)
    return render.translate(cx, cy) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ render.translate(-pw / 2, -ph / 2)


def slide_offset(role, t, direction):
    """Table-plane x offset of a print at time t (s): 0 at rest, ±SLIDE_PX out of view."""
    if role == "placed":
        u = np.clip((t - PLACE_START_S) / SLIDE_S, 0, 1)
        return direction * SLIDE_PX * (1 - u) ** 3          # ease-out: arrives slowly
    if role == "removed":
        u = np.clip((t - REMOVE_START_S) / SLIDE_S, 0, 1)
        return direction * SLIDE_PX * u ** 3                # ease-in: leaves slowly at first
    return 0.0


def camera_at(base_camera, motion, t):
    amp_t, amp_r = motion
    phase = 2 * np.pi * t / SECONDS
    dx, dy = amp_t * np.sin(phase), amp_t * 0.6 * np.sin(2 * phase)
    rot = amp_r * np.sin(1.5 * phase)
    c, s = np.cos(rot), np.sin(rot)
    m = render.translate(WIDTH / 2 + dx, HEIGHT / 2 + dy) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) \
        @ render.translate(-WIDTH / 2, -HEIGHT / 2)
    return base_camera @ m


def quad_mask(corners, grow_px):
    mask = np.zeros((HEIGHT, WIDTH), np.uint8)
    cv2.fillConvexPoly(mask, np.round(np.asarray(corners) * 4).astype(np.int32), 1, shift=2)
    if grow_px:
        mask = cv2.dilate(mask, np.ones((2 * grow_px + 1, 2 * grow_px + 1), np.uint8))
    return mask


def plan(seed, photos):
    """Everything random about the clip, drawn once. Returns (style, base camera, motion, prints)."""
    rng = np.random.default_rng(seed)
    style = render.SceneStyle(rng, WIDTH, HEIGHT)
    # A calm demo: no occluder or JPEG, mild blur, noise and lighting.
    style.occlude, style.jpeg_quality = False, None
    style.blur_sigma = min(style.blur_sigma, 0.7)
    style.noise_sigma = min(style.noise_sigma, 2.5)
    style.light_amount = float(np.clip(style.light_amount, -0.15, 0.15))
    base_camera = render.camera_homography(rng, WIDTH, HEIGHT, rng.uniform(0.02, 0.05))
    motion = (rng.uniform(6, 10), np.radians(rng.uniform(0.4, 1.0)))
    roles = ["static", "removed", "placed"]
    order = rng.permutation(len(photos))
    cells = [(0, 0), (1, 0), (0, 1), (1, 1)]
    chosen = [cells[i] for i in rng.permutation(4)[:3]]
    prints = []
    for k, (role, cell) in enumerate(zip(roles, chosen)):
        stem, name, rgb = photos[order[k]]
        image = grey_print(rgb)
        prints.append({"id": "ABC"[k], "photo": stem, "file": name, "role": role, "image": image,
                       "rest": rest_pose(rng, cell, image), "direction": -1.0 if cell[0] == 0 else 1.0})
    return style, base_camera, motion, prints


def check_layout(base_camera, motion, prints, frame_count):
    """Resting prints stay EDGE_MARGIN_PX inside the frame and GAP_PX apart in every frame."""
    for index in range(0, frame_count, 5):
        camera = camera_at(base_camera, motion, index / FPS)
        masks = []
        for p in prints:
            ph, pw = p["image"].shape[:2]
            corners = render.apply_h(camera @ p["rest"], [[0, 0], [pw, 0], [pw, ph], [0, ph]])
            if (corners.min(axis=0) < EDGE_MARGIN_PX).any() or corners[:, 0].max() > WIDTH - EDGE_MARGIN_PX \
                    or corners[:, 1].max() > HEIGHT - EDGE_MARGIN_PX:
                return f"print {p['id']} comes within {EDGE_MARGIN_PX} px of the frame edge at frame {index}"
            masks.append(quad_mask(corners, GAP_PX // 2))
        for i in range(len(masks)):
            for j in range(i + 1, len(masks)):
                if (masks[i] & masks[j]).any():
                    return f"prints {prints[i]['id']} and {prints[j]['id']} lie < {GAP_PX} px apart at frame {index}"
    return None


class _Clip:
    """What every frame's render needs; module-level so forked workers inherit it."""
    seed = style = base_camera = motion = prints = None


def timestamp_us(index):
    """Frame `index`'s source time, whole microseconds (the Xts_us FRAME tag)."""
    return index * 1_000_000 // FPS


def render_frame(index):
    """Renders frame `index` from _Clip. Returns (y4m FRAME bytes, the frame's truth entries).
    Each frame draws its noise from its own generator (seed, index), so frames can render in any order."""
    t = index / FPS
    camera = camera_at(_Clip.base_camera, _Clip.motion, t)
    placements, listed = [], []
    for p in _Clip.prints:
        offset = slide_offset(p["role"], t, p["direction"])
        table_h = render.translate(offset, 0) @ p["rest"]
        ph, pw = p["image"].shape[:2]
        corners = render.apply_h(camera @ table_h, [[0, 0], [pw, 0], [pw, ph], [0, ph]])
        if corners[:, 0].max() <= 0 or corners[:, 0].min() >= WIDTH:
            continue  # wholly out of view
        placements.append(render.Placement(p["image"], table_h, p["photo"], 0.0, "grey"))
        moving = any(abs(slide_offset(p["role"], t + dt, p["direction"]) - offset) > 1e-9
                     for dt in (-1 / FPS, 1 / FPS))
        in_frame = bool((corners >= 0).all() and (corners[:, 0] <= WIDTH).all() and (corners[:, 1] <= HEIGHT).all())
        listed.append((p, moving, in_frame))
    rng = np.random.default_rng([_Clip.seed, index])
    image, truths = render.compose(rng, _Clip.style, placements, camera, WIDTH, HEIGHT, 0)
    buffer = io.BytesIO()
    render.write_y4m_frame(buffer, image)
    payload = buffer.getvalue()
    assert payload.startswith(b"FRAME\n")
    # The frame's source time, which colorcam replay paces by and copies to its output (so output frames can be
    # matched to input frames when some are dropped).
    tagged = b"FRAME Xts_us=%d\n" % timestamp_us(index) + payload[6:]
    entries = [{"print": p["id"], "photo": p["photo"], "corners": truth["corners"], "size": truth["size"],
                "moving": moving, "in_frame": in_frame}
               for (p, moving, in_frame), truth in zip(listed, truths)]
    return tagged, entries


def render_clip(seed, photos, out_path, truth_path, workers=None, progress=True, frame_count=None):
    """Writes the clip and its truth (each atomically, via a .tmp file). Returns the truth dict.
    frame_count < FPS × SECONDS renders only the clip's first frames (the same bytes as the full clip's)."""
    frame_count = FPS * SECONDS if frame_count is None else frame_count
    style, base_camera, motion, prints = plan(seed, photos)
    problem = check_layout(base_camera, motion, prints, FPS * SECONDS)
    if problem:
        fail(f"seed {seed}: {problem}; try another --seed")
    _Clip.seed, _Clip.style, _Clip.base_camera, _Clip.motion, _Clip.prints = seed, style, base_camera, motion, prints
    workers = workers or min(4, os.cpu_count() or 1)
    frames = []
    started = time.monotonic()
    for path in (out_path, truth_path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(out_path + ".tmp", "wb") as handle:
        handle.write(f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F{FPS}:1 Ip A1:1 C420jpeg\n".encode())
        pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None
        try:
            results = pool.imap(render_frame, range(frame_count), chunksize=10) if pool \
                else map(render_frame, range(frame_count))
            for index, (data, entries) in enumerate(results):
                handle.write(data)
                frames.append({"frame": index, "timestamp_us": timestamp_us(index), "photos": entries})
                if progress and (index + 1) % 60 == 0:
                    sys.stderr.write(f"scene: frame {index + 1}/{frame_count} ({time.monotonic() - started:.1f} s)\n")
        finally:
            if pool:
                pool.close()
                pool.join()
    os.replace(out_path + ".tmp", out_path)
    summary = []
    for p in prints:
        seen = [f["frame"] for f in frames if any(e["print"] == p["id"] for e in f["photos"])]
        still = [f["frame"] for f in frames
                 if any(e["print"] == p["id"] and e["in_frame"] and not e["moving"] for e in f["photos"])]
        summary.append({"print": p["id"], "photo": p["photo"], "file": p["file"], "role": p["role"],
                        "size": [p["image"].shape[1], p["image"].shape[0]],
                        "first_frame": seen[0] if seen else None, "last_frame": seen[-1] if seen else None,
                        "rest_frames": [still[0], still[-1]] if still else None})
    truth = {"seed": seed, "width": WIDTH, "height": HEIGHT, "fps": FPS, "frame_count": frame_count,
             "table": style.table_info, "prints": summary, "frames": frames}
    with open(truth_path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.replace(truth_path + ".tmp", truth_path)
    return truth


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the .y4m to write")
    parser.add_argument("--truth", required=True, help="the truth .json to write")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--photos", default=os.path.join(ROOT, "Assets", "demo-photos"))
    parser.add_argument("--workers", type=int, default=0, help="render processes (default: up to 4, one per core)")
    parser.add_argument("--frames", type=int, help="render only the first N frames (tests)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    started = time.monotonic()
    if args.frames is not None and not 1 <= args.frames <= FPS * SECONDS:
        fail(f"--frames {args.frames}: must be 1…{FPS * SECONDS}", 64)
    try:
        truth = render_clip(args.seed, load_photos(args.photos), args.out, args.truth, args.workers,
                            progress=not args.quiet, frame_count=args.frames)
    except OSError as error:
        fail(f"{error.filename}: cannot write ({error.strerror})", 74)
    for p in truth["prints"]:
        still = f"{p['rest_frames'][0]}-{p['rest_frames'][1]}" if p["rest_frames"] else "never"
        print(f"scene: print {p['print']} {p['photo']} ({p['role']}, {p['size'][0]}x{p['size'][1]}): "
              f"frames {p['first_frame']}-{p['last_frame']}, still {still}")
    print(f"scene: wrote {args.out} ({truth['frame_count']} frames {WIDTH}x{HEIGHT} @ {FPS} fps, "
          f"{truth['table']['kind']} table) and {args.truth} in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
