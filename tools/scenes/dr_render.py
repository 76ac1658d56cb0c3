#!/usr/bin/env python3
"""Domain-randomized scenes of prints on tables, for training the detector's CNN and for a held-out benchmark.

  dr_render.py stills --split train|heldout --count N --seed S --out DIR [--size 640x480] [--workers 2]
      DIR/scene_00000.png … and DIR/truth.json ({"split","seed","scenes":[{"file","width","height","table","camera",
      "photos":[{"corners","size","photo","border","style","hand_cover","overlap","buckets"}]}]})
  dr_render.py sequence --split train|heldout --seed S --out DIR [--size 640x480]
      DIR/sequence.y4m and DIR/truth.json: one print slid at 2–15 px/frame, often partly out of view (render_sequence)
  dr_render.py hands --split train|heldout --seed S --out DIR [--size 640x480]
      DIR/sequence.y4m and DIR/truth.json: still prints, a hand over one of them at first, then drawn away
      (render_hand_sequence; the keepsake check, tools/profile/keepsake_check.py)
  dr_render.py pack   --split train|heldout --count N --seed S --out FILE.npz [--size 640x480] [--workers 2]
                      [--photo-tables F] [--overlap-rate R]
      the CNN's training pack: X uint8 [N,3,gh,gw] (cell means of Y, Cb, Cr), Y uint8 [N,2,gh,gw] (interior and
      paper-edge targets ×255), with gh × gw = the frame / cell (cell = 2 × the detector's coarse factor: 4 px at 640×480);
      corners float32 [N,8,4,2]: each print's corners in frame pixels, bottom to top, NaN after the last print

Every nuisance factor is drawn per scene, widely: table family and instance (dr_textures.py: wood, cloth, leather,
stone, paper, cork, carpet, plain light / dark, glossy, procedural; instances split train / held-out), camera tilt
0–50° from vertical, field of view 50–75°, roll, distance; prints 2:3, 3:4, 1:1, 5:7, portrait or landscape, with or
without a white / cream border, black-and-white, toned (sepia, selenium, cool), faded or colour, 0–5 per scene,
overlapping up to 15 % in some scenes, slightly curled, with glare; skin-toned hands (several tones, fingers;
with `--hands arms` also a thumb and a forearm to the frame's edge, bare or sleeved: dr_hands.py) covering up to
20 % of a print; drop shadows, hard and soft cast shadows, lighting gradients, vignetting, white
balance, exposure, focus and motion blur, sensor noise, JPEG. Photos are split by instance (dr_photos.py).
Training packs may also lay a fraction F of their scenes on a photograph of the split instead of a table texture
(`--photo-tables`, `photo_table`): any picture can be the table, so the net has to find the paper, not a texture it
knows. Stills and held-out packs never do (the benchmark's tables stay the texture families). Training packs may
also let prints overlap more often (`--overlap-rate R`: the chance that a scene of two or more prints lets them
overlap; 0.3 everywhere else, the held-out set included).
Corners: pixels, the image spanning [0, W] × [0, H], clockwise from the corner nearest (0, 0) (as render.py).
"""
import argparse
import copy
import json
import math
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dr_photos  # noqa: E402
from dr_hands import HAND_STYLES, SKIN, draw_hand  # noqa: E402,F401  (SKIN: print_sim.py)
import metrics  # noqa: E402
import dr_textures  # noqa: E402
from render import apply_h, cv_matrix, order_corners, translate, write_y4m_frame  # noqa: E402

ASPECTS = [2 / 3, 3 / 4, 1.0, 5 / 7]
TONES = {"sepia": (1.08, 0.95, 0.76), "selenium": (1.03, 0.97, 1.02), "cool": (0.92, 0.98, 1.08),
         "warm": (1.05, 1.0, 0.9)}


def cell_px(width, height):
    return 2 * max(1, min(width, height) // 240)


# ---------------------------------------------------------------- camera

def camera(rng, width, height):
    """Table plane (z = 0) → image homography of a pinhole camera looking at the table's origin."""
    r = rng.random()
    tilt = rng.uniform(0, 15) if r < 0.35 else (rng.uniform(15, 35) if r < 0.65 else rng.uniform(35, 50))
    fov = rng.uniform(50, 75)
    f = width / 2 / math.tan(math.radians(fov) / 2)
    vfov_half = math.degrees(math.atan(height / 2 / f))
    tilt = min(tilt, 72 - vfov_half)  # keep the far edge of the view on the table, not at the horizon
    roll = rng.uniform(-180, 180) if rng.random() < 0.3 else rng.uniform(-12, 12)
    k = np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1]])
    t, ro = math.radians(tilt), math.radians(roll)
    rx = np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])
    rz = np.array([[math.cos(ro), -math.sin(ro), 0], [math.sin(ro), math.cos(ro), 0], [0, 0, 1]])
    rot = rz @ rx
    d = f * rng.uniform(0.8, 1.5)  # table units per px at the centre: 1/… (texture scale varies)
    h = k @ np.column_stack([rot[:, 0], rot[:, 1], [0, 0, d]])
    return h / h[2, 2], {"tilt_deg": round(tilt, 2), "fov_deg": round(fov, 2), "roll_deg": round(roll, 2)}


def local_scale(h, point):
    """Image px per table unit at table `point` (square root of the homography's Jacobian determinant)."""
    x, y = point
    e = 0.5
    p = apply_h(h, [[x - e, y], [x + e, y], [x, y - e], [x, y + e]])
    jx, jy = (p[1] - p[0]) / (2 * e), (p[3] - p[2]) / (2 * e)
    return math.sqrt(abs(jx[0] * jy[1] - jx[1] * jy[0]))


# ---------------------------------------------------------------- prints

def synthetic_picture(rng, long_px=512):
    """A procedural picture (sky/ground gradient, blobs, strokes, blur) for content variety in training."""
    h, w = long_px, int(long_px * rng.uniform(0.6, 1.0))
    img = np.empty((h, w, 3), np.float32)
    top, bottom = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    t = np.linspace(0, 1, h)[:, None, None]
    img[:] = top * (1 - t) + bottom * t
    for _ in range(int(rng.integers(3, 25))):
        colour = rng.uniform(0, 255, 3).tolist()
        if rng.random() < 0.5:
            cv2.ellipse(img, (int(rng.uniform(0, w)), int(rng.uniform(0, h))),
                        (int(rng.uniform(5, w / 3)), int(rng.uniform(5, h / 3))), rng.uniform(0, 180), 0, 360,
                        colour, -1, cv2.LINE_AA)
        else:
            pts = rng.uniform(0, 1, (int(rng.integers(2, 6)), 2)) * [w, h]
            cv2.polylines(img, [pts.astype(np.int32)], False, colour, int(rng.integers(1, 12)), cv2.LINE_AA)
    img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.5, 4))
    img += rng.standard_normal(img.shape).astype(np.float32) * rng.uniform(0, 12)
    return np.clip(img, 0, 255)


def make_print(rng, photo):
    """A print's picture at ~900 px long side: crop, tone, fade, border. Returns (float32 RGB, info)."""
    aspect = ASPECTS[int(rng.integers(len(ASPECTS)))] * rng.uniform(0.97, 1.03)
    portrait = rng.random() < 0.45
    h, w = photo.shape[:2]
    target = (aspect if portrait else 1 / aspect)  # width / height
    if w / h > target:
        cw, ch = int(round(h * target)), h
    else:
        cw, ch = w, int(round(w / target))
    x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    crop = photo[y0:y0 + ch, x0:x0 + cw].astype(np.float32)
    scale = 700 / max(crop.shape[:2])
    crop = cv2.resize(crop, (max(4, int(cw * scale)), max(4, int(ch * scale))), interpolation=cv2.INTER_AREA)
    r = rng.random()
    grey = crop @ np.array([0.299, 0.587, 0.114], np.float32)
    if r < 0.45:
        style = "bw"
        crop = np.repeat(grey[..., None], 3, axis=2)
    elif r < 0.75:
        style = list(TONES)[int(rng.integers(len(TONES)))]
        tone = np.array(TONES[style], np.float32) ** rng.uniform(0.5, 1.6)
        crop = grey[..., None] * tone + rng.uniform(0, 15)
    else:
        style = "colour"
        if rng.random() < 0.5:  # a dimmer print
            crop = crop * rng.uniform(0.6, 1.0)
            rng.uniform(0.6, 1.0)  # drawn and unused: keeps every scene as the committed figures rendered it
    faded = rng.random() < 0.3
    lo, hi = (rng.uniform(30, 90), rng.uniform(190, 240)) if faded else (rng.uniform(0, 25), rng.uniform(225, 255))
    crop = lo + crop / 255.0 * (hi - lo)
    border, pad = 0.0, 0
    if rng.random() < 0.5:
        border = rng.uniform(0.02, 0.10)
        pad = max(2, int(round(border * min(crop.shape[:2]))))
        paper = rng.uniform(215, 252) * np.array([1.0, rng.uniform(0.96, 1.0), rng.uniform(0.86, 1.0)], np.float32)
        framed = np.empty((crop.shape[0] + 2 * pad, crop.shape[1] + 2 * pad, 3), np.float32)
        framed[:] = paper
        framed[pad:pad + crop.shape[0], pad:pad + crop.shape[1]] = crop
        crop = framed
    # Paper grain.
    crop += rng.standard_normal(crop.shape[:2]).astype(np.float32)[..., None] * rng.uniform(0, 5)
    # where the picture came from (photo px) and its border (print px): the colour check's ground truth
    return np.clip(crop, 0, 255), {"border": round(border, 4), "style": style, "faded": bool(faded),
                                   "crop": [x0, y0, cw, ch], "pad_px": pad}


def quad_mask(corners, width, height, scale=1):
    mask = np.zeros((height * scale, width * scale), np.uint8)
    pts = np.round((np.asarray(corners) * scale - 0.5) * 16).astype(np.int32)
    cv2.fillConvexPoly(mask, pts, 1, lineType=cv2.LINE_8, shift=4)
    return mask


def place_prints(rng, photos, table_h, width, height, count, overlap_rate=0.3):
    """Chooses prints and where they lie; with two or more, they may overlap (up to 15 %) with probability
    `overlap_rate`. Returns [(table homography print px → table, image, info)]."""
    inv = np.linalg.inv(table_h)
    short = min(width, height)
    allow_overlap = count >= 2 and rng.random() < overlap_rate
    placed, masks = [], []
    for _ in range(count):
        if rng.random() < 0.25:
            name, photo = "synthetic", synthetic_picture(rng)
        else:
            name, photo = photos[int(rng.integers(len(photos)))]
        image, info = make_print(rng, photo)
        ph, pw = image.shape[:2]
        for _attempt in range(40):
            frac = rng.uniform(0.10, 0.20) if rng.random() < 0.3 else rng.uniform(0.2, 0.5 if count <= 2 else 0.36)
            centre_img = rng.uniform([0.12 * width, 0.12 * height], [0.88 * width, 0.88 * height])
            centre = apply_h(inv, [centre_img])[0]
            s = local_scale(table_h, centre)
            short_units = frac * short / s
            scale = short_units / min(ph, pw)
            angle = rng.uniform(0, 2 * np.pi) if rng.random() < 0.5 else rng.uniform(-0.3, 0.3)
            c, si = math.cos(angle), math.sin(angle)
            ph_h = translate(*centre) @ np.array([[c, -si, 0], [si, c, 0], [0, 0, 1]]) \
                @ np.diag([scale, scale, 1.0]) @ translate(-pw / 2, -ph / 2)
            corners = apply_h(table_h @ ph_h, [[0, 0], [pw, 0], [pw, ph], [0, ph]])
            if (corners[:, 0].min() < 4 or corners[:, 1].min() < 4 or corners[:, 0].max() > width - 4
                    or corners[:, 1].max() > height - 4):
                continue
            sides = [np.linalg.norm(corners[(i + 1) % 4] - corners[i]) for i in range(4)]
            if min(sides) < 0.08 * short:
                continue
            mask = quad_mask(corners, width, height)
            area = mask.sum()
            ok = True
            for other in masks:
                inter = (mask & other).sum()
                if allow_overlap:
                    if inter > 0.15 * min(area, other.sum()) or (inter == 0 and (cv2.dilate(mask, np.ones((13, 13), np.uint8)) & other).any()):
                        ok = False
                elif (cv2.dilate(mask, np.ones((13, 13), np.uint8)) & other).any():
                    ok = False
                if not ok:
                    break
            if not ok:
                continue
            info = dict(info, photo=name)
            placed.append((ph_h, image, info))
            masks.append(mask)
            break
    return placed


# ---------------------------------------------------------------- scene

def photo_table(rng, photos, height, width):
    """A photograph of the split as a table texture (float32 RGB height × width): a random crop, scaled to fill,
    softened, its contrast and colour changed; mirrored tiles when the crop is small. Teaches the detector that a
    print is a sheet of paper with an edge, not a kind of picture: the table may be any picture too."""
    _, photo = photos[int(rng.integers(len(photos)))]
    h, w = photo.shape[:2]
    scale = rng.uniform(0.25, 1.0)
    ch, cw = max(16, int(h * scale)), max(16, int(w * scale))
    y0, x0 = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
    crop = photo[y0:y0 + ch, x0:x0 + cw].astype(np.float32)
    if rng.random() < 0.3:  # a pattern of mirrored tiles
        reps = int(rng.integers(2, 5))
        row = np.concatenate([crop, crop[:, ::-1]] * reps, axis=1)
        crop = np.concatenate([row, row[::-1]] * reps, axis=0)
    image = cv2.resize(crop, (width, height), interpolation=cv2.INTER_AREA if crop.shape[1] > width else cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.5, 4))
    if rng.random() < 0.4:  # toned or grey, like a print
        grey = image @ np.array([0.299, 0.587, 0.114], np.float32)
        image = grey[..., None] * rng.uniform(0.7, 1.1, 3).astype(np.float32)
    mean = image.mean(axis=(0, 1), keepdims=True)
    image = mean + (image - mean) * rng.uniform(0.4, 1.2)
    image = image * rng.uniform(0.6, 1.3, 3).astype(np.float32) + rng.uniform(-30, 30)
    return np.clip(image, 0, 255).astype(np.float32)


# Seeds whose scenes are the training split's tuning sets: scene k of seed S is seed S * 1e6 + k whatever the mode,
# so a pack of the same seed would hold the same scenes (with a quarter of their tables swapped for photographs).
# No pack may use them; training packs so far used 11-33.
TUNING_SEEDS = range(90, 100)


def _lay_scene(rng, seed, photos, width, height, split, frame_index, motion, photo_tables, instances, overlap_rate,
               yy, xx):
    """`render`'s scene before any hand: camera, table, prints, their shadows, curl and glare, a cast shadow. Returns
    (float32 RGB frame, layers [(image, mask, corners)], truths, full masks, table info, camera); draws from `rng`.
    `yy`, `xx`: the frame's pixel row and column grids (float32)."""
    table_h, cam = camera(rng, width, height)
    kind = dr_textures.KINDS[int(rng.integers(len(dr_textures.KINDS)))]
    lo, hi = instances or (0, dr_textures.INSTANCES_PER_KIND[split])
    instance = lo + int(rng.integers(hi - lo))
    # The table texture covers the view's footprint at ≤ 900 texels on its long side.
    inv = np.linalg.inv(table_h)
    foot = apply_h(inv, [[-20, -20], [width + 20, -20], [width + 20, height + 20], [-20, height + 20]])
    lo, hi = foot.min(axis=0), foot.max(axis=0)
    span = hi - lo
    texels = min(1.0, 900 / span.max()) * rng.uniform(0.6, 1.0)
    tw, th = max(8, int(span[0] * texels)), max(8, int(span[1] * texels))
    texture, table_info = dr_textures.table(kind, instance, split, rng, th, tw)
    # A photograph as the table (training packs only, --photo-tables): its own rng, so every other draw of the scene
    # stays as it was.
    table_rng = np.random.default_rng(seed + 777_000_000)
    if photo_tables > 0 and table_rng.random() < photo_tables:
        texture, table_info = photo_table(table_rng, photos, th, tw), {"kind": "photo", "bucket": "photo",
                                                                       "instance": -1, "split": split}
    tex_to_table = translate(*lo) @ np.diag([1 / texels, 1 / texels, 1.0])
    frame = cv2.warpPerspective(texture, cv_matrix(table_h @ tex_to_table), (width, height), flags=cv2.INTER_AREA
                                if texels < 0.5 else cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    count = int(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4, 5]))
    if frame_index is not None:
        count = max(count, 1)
    prints = place_prints(rng, photos, table_h, width, height, count, overlap_rate)
    if motion is not None:
        prints = [(h, image, info) for h, (_, image, info) in zip(motion(table_h, prints), prints)]
    # Drop shadows (all under all prints), then the prints bottom to top.
    shadow_offset = rng.uniform(-1, 1, 2) * rng.uniform(0, 6)
    shadow_sigma, shadow_strength = rng.uniform(0.8, 6), rng.uniform(0.0, 0.5)
    truths, layers = [], []
    for ph_h, image, info in prints:
        h_img = table_h @ ph_h
        ph, pw = image.shape[:2]
        corners = order_corners(apply_h(h_img, [[0, 0], [pw, 0], [pw, ph], [0, ph]]))
        img = cv2.warpPerspective(image, cv_matrix(h_img), (width, height), flags=cv2.INTER_AREA,
                                  borderMode=cv2.BORDER_REPLICATE)
        padded = cv2.copyMakeBorder(np.ones(image.shape[:2], np.float32), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
        mask = cv2.warpPerspective(padded, cv_matrix(h_img @ translate(-1, -1)), (width, height),
                                   flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        layers.append((img, mask, corners))
        truths.append({"corners": corners.round(3).tolist(), "size": [pw, ph], **info})
    for _, mask, _ in layers:
        shifted = cv2.warpAffine(mask, np.float32([[1, 0, shadow_offset[0]], [0, 1, shadow_offset[1]]]),
                                 (width, height))
        frame = frame * (1 - shadow_strength * cv2.GaussianBlur(shifted, (0, 0), shadow_sigma))[..., None]
    for img, mask, corners in layers:
        # Curl: a shading ramp towards one side; glare: a soft highlight.
        shade = np.ones((height, width), np.float32)
        if rng.random() < 0.3:
            c = corners.mean(axis=0)
            d = rng.uniform(-1, 1, 2)
            ramp = ((xx - c[0]) * d[0] + (yy - c[1]) * d[1]) / (np.abs(corners - c).max() + 1)
            shade = 1 + rng.uniform(0.05, 0.2) * np.clip(ramp, -1, 1)
        img = img * shade[..., None]
        if rng.random() < 0.25:
            g = corners.mean(axis=0) + rng.uniform(-0.3, 0.3, 2) * (corners.max(0) - corners.min(0))
            sx, sy = rng.uniform(10, 80, 2)
            glare = np.exp(-((xx - g[0]) / sx) ** 2 - ((yy - g[1]) / sy) ** 2) * rng.uniform(40, 160)
            img = img + glare[..., None]
        frame = frame * (1 - mask[..., None]) + img * mask[..., None]
    # Overlaps: which prints touch which.
    full_masks = [quad_mask(c, width, height) for _, _, c in layers]
    for i in range(len(layers)):
        truths[i]["overlap"] = any((full_masks[i] & full_masks[j]).any() for j in range(len(layers)) if j != i)
        truths[i]["hand_cover"] = 0.0
    # Cast shadow across the scene (an object or arm out of view).
    if rng.random() < 0.3:
        pts = rng.uniform(-0.3, 1.3, (int(rng.integers(3, 6)), 2)) * [width, height]
        shadow = np.zeros((height, width), np.float32)
        cv2.fillPoly(shadow, [cv2.convexHull(pts.astype(np.float32)).astype(np.int32)], 1.0)
        shadow = cv2.GaussianBlur(shadow, (0, 0), rng.uniform(0.5, 15))
        frame = frame * (1 - rng.uniform(0.15, 0.55) * shadow)[..., None]
    return frame, layers, truths, full_masks, table_info, cam


def render(seed, photos, width, height, split, frame_index=None, motion=None, hand=None, photo_tables=0.0,
           instances=None, overlap_rate=0.3, still=None, hands="plain"):
    """One scene, fully determined by `seed`. Returns (uint8 RGB frame, each print's corners, scene dict).

    For a video frame: `frame_index` draws the sensor noise afresh for that frame (everything else stays), there is
    at least one print and no random hand, and `motion(table_h, prints)` may move prints (returns their new table
    homographies). `hand(corners)` may lay a given hand over the frame: it returns (mask, RGB) as `draw_hand` does,
    or None; it is drawn like the stills' hands (before the light) and each print's `hand_cover` recorded.
    `instances`: (lo, hi), the table texture instances drawn from (default: the split's 0:INSTANCES_PER_KIND); the
    scene's other draws do not depend on it. `overlap_rate`: how often two or more prints may overlap (training packs
    may raise it): the table and camera are drawn before it and stay; where it decides otherwise, the prints'
    placement and every later draw differ. `still`: a dict kept by the caller across the frames of one clip whose
    scene does not move (no `motion`): the table, prints, shadows and the random generator's state after them are
    laid once and taken from it on later frames, so each frame costs only its hand, light and sensor (the same bytes
    as without it). `hands`: "plain", the generator's first hand, or "arms", the same hand with a thumb, unequal
    fingers and a forearm to the frame's edge (`dr_hands.draw_hand`; the scene's other draws stay the same)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    key = (seed, width, height, split, frame_index is None, photo_tables, instances, overlap_rate)
    if still is not None and still.get("key") == key and motion is None:
        rng.bit_generator.state = still["state"]
        frame, layers, truths, full_masks, table_info, cam = still["scene"]
        truths = copy.deepcopy(truths)
    else:
        frame, layers, truths, full_masks, table_info, cam = _lay_scene(
            rng, seed, photos, width, height, split, frame_index, motion, photo_tables, instances, overlap_rate, yy, xx)
        if still is not None and motion is None:
            still.update(key=key, state=rng.bit_generator.state,
                         scene=(frame, layers, copy.deepcopy(truths), full_masks, table_info, cam))
    # A hand over one print.
    if truths and rng.random() < 0.3 and frame_index is None:
        target = int(rng.integers(len(truths)))
        for _ in range(6):
            state = rng.bit_generator.state
            hmask, hrgb = draw_hand(rng, truths[target]["corners"], width, height)
            cover = float((hmask * full_masks[target]).sum() / max(1, full_masks[target].sum()))
            if cover <= 0.2:
                if hands == "arms":  # the same draws from rng, the thumb and arm from a stream of their own
                    rng.bit_generator.state = state
                    hmask, hrgb = draw_hand(rng, truths[target]["corners"], width, height,
                                            arm_rng=np.random.default_rng([seed, 0x4A4D]))
                    cover = float((hmask * full_masks[target]).sum() / max(1, full_masks[target].sum()))
                break
        else:
            hmask = None
        if hmask is not None:
            hshadow = cv2.GaussianBlur(cv2.warpAffine(hmask, np.float32([[1, 0, rng.uniform(2, 12)],
                                                                          [0, 1, rng.uniform(2, 12)]]),
                                                      (width, height)), (0, 0), rng.uniform(2, 8))
            frame = frame * (1 - 0.35 * hshadow)[..., None]
            frame = frame * (1 - hmask[..., None]) + hrgb * hmask[..., None]
            truths[target]["hand_cover"] = round(cover, 4)
            for i in range(len(truths)):
                if i != target:
                    truths[i]["hand_cover"] = round(float((hmask * full_masks[i]).sum() / max(1, full_masks[i].sum())), 4)
    if hand is not None and frame_index is not None:
        drawn = hand([c for _, _, c in layers])
        if drawn is not None:
            hmask, hrgb = drawn
            hshadow = cv2.GaussianBlur(cv2.warpAffine(hmask, np.float32([[1, 0, 6], [0, 1, 6]]), (width, height)),
                                       (0, 0), 4)
            frame = frame * (1 - 0.35 * hshadow)[..., None]
            frame = frame * (1 - hmask[..., None]) + hrgb * hmask[..., None]
            for i in range(len(truths)):
                truths[i]["hand_cover"] = round(float((hmask * full_masks[i]).sum() / max(1, full_masks[i].sum())), 4)
    # Light: gradient, vignetting, white balance, exposure.
    angle = rng.uniform(0, 2 * np.pi)
    ramp = ((xx - width / 2) * math.cos(angle) + (yy - height / 2) * math.sin(angle)) / (math.hypot(width, height) / 2)
    frame = frame * (1 + rng.uniform(-0.35, 0.35) * ramp)[..., None]
    r2 = ((xx - width / 2) ** 2 + (yy - height / 2) ** 2) / ((width / 2) ** 2 + (height / 2) ** 2)
    frame = frame * (1 - rng.uniform(0, 0.45) * r2)[..., None]
    frame = frame * rng.uniform(0.8, 1.2, 3).astype(np.float32) * rng.uniform(0.6, 1.35)
    frame = 255 * (np.clip(frame, 0, 255) / 255) ** rng.uniform(0.8, 1.25)
    blur = rng.uniform(0.3, 2.0) if rng.random() < 0.5 else 0.0
    if blur > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), blur)
    if rng.random() < 0.1:
        k = np.zeros((9, 9), np.float32)
        length = int(rng.integers(2, 5))
        cv2.line(k, (4 - length, 4), (4 + length, 4), 1.0)
        rot = cv2.getRotationMatrix2D((4, 4), rng.uniform(0, 180), 1.0)
        k = cv2.warpAffine(k, rot, (9, 9))
        frame = cv2.filter2D(frame, -1, k / max(k.sum(), 1e-6))
    shot, read = rng.uniform(0, 0.6), rng.uniform(0.5, 5)
    noise_rng = rng if frame_index is None else np.random.default_rng([seed, frame_index])
    noise = noise_rng.standard_normal(frame.shape).astype(np.float32)
    frame = frame + noise * np.sqrt(read ** 2 + shot ** 2 * np.maximum(frame, 0))
    frame = np.clip(frame + 0.5, 0, 255).astype(np.uint8)
    jpeg = int(rng.integers(35, 96)) if rng.random() < 0.7 else None
    if jpeg is not None:
        ok, data = cv2.imencode(".jpg", cv2.cvtColor(frame, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, jpeg])
        frame = cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    short = min(width, height)
    for t in truths:
        c = np.asarray(t["corners"])
        sides = [np.linalg.norm(c[(i + 1) % 4] - c[i]) for i in range(4)]
        short_side = min((sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2)
        t["buckets"] = [table_info["bucket"]] + (["hand"] if t["hand_cover"] > 0.005 else []) \
            + (["overlap"] if t["overlap"] else []) + (["tilt>=35"] if cam["tilt_deg"] >= 35 else []) \
            + (["no-border"] if t["border"] == 0 else ["border"]) + (["small"] if short_side < 0.2 * short else [])
    scene = {"seed": int(seed), "width": width, "height": height, "table": table_info, "camera": cam,
             "photos": truths, "blur_sigma": round(blur, 3), "jpeg_quality": jpeg}
    return frame, [c for _, _, c in layers], scene


def targets(corners_list, width, height):
    """Interior and paper-edge targets on the CNN grid (uint8, ×255), from each print's corners (bottom to top)."""
    return (target_planes(corners_list, width, height, cell_px(width, height)) * 255 + 0.5).astype(np.uint8)


def target_planes(corners_list, width, height, cell):
    """The interior and paper-edge planes (float32, 0…1) on a grid of `cell` px cells, from each print's corners
    (bottom to top): the targets at the CNN grid's cell, and on finer grids for tools that stand in for the CNN."""
    gw, gh = width // cell, height // cell
    interior = np.zeros((height, width), np.float32)
    edge = np.zeros((height, width), np.float32)
    masks = [quad_mask(c, width, height).astype(np.float32) for c in corners_list]
    for i, corners in enumerate(corners_list):
        interior = np.maximum(interior, masks[i])
        line = np.zeros((height, width), np.float32)
        pts = np.round((np.asarray(corners) - 0.5) * 16).astype(np.int32)
        cv2.polylines(line, [pts], True, 1.0, thickness=int(round(1.5 * cell)), lineType=cv2.LINE_8, shift=4)
        for j in range(i + 1, len(corners_list)):  # hidden under a print above
            line *= 1 - masks[j]
        edge = np.maximum(edge, line)
    crop = (slice(0, gh * cell), slice(0, gw * cell))
    interior = cv2.resize(interior[crop], (gw, gh), interpolation=cv2.INTER_AREA)
    edge = cv2.resize(edge[crop], (gw, gh), interpolation=cv2.INTER_AREA)
    edge = np.clip(edge * 1.5, 0, 1)
    return np.stack([interior, edge]).astype(np.float32)


def cnn_input(frame):
    """Y, Cb, Cr (BT.601 full range) cell means on the CNN grid, uint8 [3, gh, gw] (`cnn_cell_means` rounded)."""
    return np.clip(cnn_cell_means(frame) + 0.5, 0, 255).astype(np.uint8)


def cell_planes(frame, cell):
    """Y, Cb, Cr (BT.601 full range) of the RGB `frame` split into `cell`-px cells: three float32 arrays
    [gh, cell, gw, cell] (the frame cropped to whole cells)."""
    height, width = frame.shape[:2]
    gw, gh = width // cell, height // cell
    f = frame[:gh * cell, :gw * cell].astype(np.float32)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
    cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
    return [p.reshape(gh, cell, gw, cell) for p in (y, cb, cr)]


def cnn_cell_means(frame, cell=None):
    """Y, Cb, Cr (BT.601 full range) means of the RGB `frame`'s cells on the CNN grid (or on cells of `cell` px),
    float32 [3, gh, gw]."""
    height, width = frame.shape[:2]
    planes = [p.mean(axis=(1, 3)) for p in cell_planes(frame, cell or cell_px(width, height))]
    return np.stack(planes).astype(np.float32)


def render_sequence(seed, photos, width, height, split, fps, out_dir):
    """A clip of one domain-randomized scene in which one print is slid by hand (not drawn): at rest, slid at 2–15 px
    per frame in the image (often partly out of view), at rest, slid back, at rest. Camera still. Writes
    sequence.y4m (420jpeg) and truth.json ({"frames":[{"frame","photos":[{"corners","size","visible","speed_px",
    "mover"}]}]}: corners may lie outside the frame; `visible` is the fraction of the print inside it)."""
    srng = np.random.default_rng([seed, 777])
    speed = float(srng.uniform(2, 15))
    angle = float(srng.uniform(0, 2 * np.pi))
    rest0, slide, rest1, rest2 = (int(srng.integers(a, b)) for a, b in ((10, 25), (15, 40), (8, 20), (10, 20)))
    mover_key = int(srng.integers(0, 1000))
    schedule = []  # image-space displacement of the mover, px
    d = 0.0
    for phase, n, v in ((0, rest0, 0.0), (1, slide, speed), (2, rest1, 0.0), (3, slide, -speed), (4, rest2, 0.0)):
        for _ in range(n):
            d += v
            schedule.append((d, abs(v)))
    direction = np.array([math.cos(angle), math.sin(angle)])

    def motion_at(index):
        def motion(table_h, prints):
            hs = [h for h, _, _ in prints]
            k = mover_key % len(prints)
            ph, pw = prints[k][1].shape[:2]
            centre_img = apply_h(table_h @ hs[k], [[pw / 2, ph / 2]])[0]
            inv = np.linalg.inv(table_h)
            old, new = apply_h(inv, [centre_img, centre_img + schedule[index][0] * direction])
            hs[k] = translate(*(new - old)) @ hs[k]
            return hs
        return motion

    os.makedirs(out_dir, exist_ok=True)
    truth = {"seed": int(seed), "split": split, "width": width, "height": height, "fps": fps,
             "speed_px_per_frame": round(speed, 3), "frames": []}
    with open(os.path.join(out_dir, "sequence.y4m.partial"), "wb") as handle:
        handle.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(len(schedule)):
            frame, corners, scene = render(seed, photos, width, height, split, frame_index=index,
                                           motion=motion_at(index))
            write_y4m_frame(handle, frame)
            k = mover_key % len(corners)
            photos_out = []
            for i, (c, p) in enumerate(zip(corners, scene["photos"])):
                area = abs(cv2.contourArea(np.asarray(c, np.float32)))
                inside = metrics.polygon_area(metrics.clip_polygon(c, 0, 0, width, height))
                photos_out.append({"corners": np.asarray(c).round(3).tolist(), "size": p["size"],
                                   "visible": round(inside / max(area, 1e-9), 4), "mover": i == k,
                                   "speed_px": round(schedule[index][1], 3) if i == k else 0.0})
            truth["frames"].append({"frame": index, "photos": photos_out})
        truth["table"], truth["camera"] = scene["table"], scene["camera"]
    os.replace(os.path.join(out_dir, "sequence.y4m.partial"), os.path.join(out_dir, "sequence.y4m"))
    with open(os.path.join(out_dir, "truth.json"), "w") as out:
        json.dump(truth, out)
    return truth


def render_hand_sequence(seed, photos, width, height, split, fps, out_dir):
    """A clip of one domain-randomized scene, camera and prints still, with a hand lying over one print at the start
    (covering 4–30 % of it), then drawn away out of view, then gone: the keepsake check (a saved photo must be a view
    with nothing over the print). Writes sequence.y4m (420jpeg) and truth.json ({"frames":[{"frame","photos":
    [{"corners","hand_cover","style"}]}], "hand_print": the covered print's index, "hand_frames": frames with the
    hand, "hand_still_frames": the first frames, in which it lies still), and hand.png (its coverage there, 0–255)."""
    hrng = np.random.default_rng([seed, 991])
    laid = {}  # the scene laid once: only the hand, light and sensor change from frame to frame
    _, corners0, _ = render(seed, photos, width, height, split, frame_index=0, still=laid)
    target = int(hrng.integers(len(corners0)))
    print_mask = quad_mask(corners0[target], width, height).astype(np.float32)
    for _ in range(20):
        hmask, hrgb = draw_hand(hrng, corners0[target], width, height)
        cover = float((hmask * print_mask).sum() / max(1, print_mask.sum()))
        if 0.04 <= cover <= 0.3:
            break
    # Away from the print: from its centre towards the hand's.
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    weight = max(float(hmask.sum()), 1e-6)
    away = np.array([(xx * hmask).sum() / weight, (yy * hmask).sum() / weight]) - np.asarray(corners0[target]).mean(0)
    away /= np.linalg.norm(away) + 1e-9
    still, leaving, gone = int(hrng.integers(15, 30)), 10, int(hrng.integers(40, 60))
    travel = float(max(width, height))

    def hand_at(index):
        if index >= still + leaving:
            return None
        shift = away * travel * max(0, index - still + 1) / leaving
        move = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        return lambda corners: (cv2.warpAffine(hmask, move, (width, height)),
                                cv2.warpAffine(hrgb, move, (width, height), borderMode=cv2.BORDER_REPLICATE))

    os.makedirs(out_dir, exist_ok=True)
    cv2.imwrite(os.path.join(out_dir, "hand.png"), np.round(hmask * 255).astype(np.uint8))
    truth = {"seed": int(seed), "split": split, "width": width, "height": height, "fps": fps, "hand_print": target,
             "hand_still_frames": still, "frames": []}
    with open(os.path.join(out_dir, "sequence.y4m.partial"), "wb") as handle:
        handle.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(still + leaving + gone):
            frame, corners, scene = render(seed, photos, width, height, split, frame_index=index, hand=hand_at(index),
                                           still=laid)
            write_y4m_frame(handle, frame)
            truth["frames"].append({"frame": index, "photos": [
                {"corners": np.asarray(c).round(3).tolist(), "hand_cover": p["hand_cover"], "style": p["style"]}
                for c, p in zip(corners, scene["photos"])]})
        truth["table"], truth["camera"] = scene["table"], scene["camera"]
    truth["hand_frames"] = sum(1 for f in truth["frames"] if f["photos"][target]["hand_cover"] > 0)
    os.replace(os.path.join(out_dir, "sequence.y4m.partial"), os.path.join(out_dir, "sequence.y4m"))
    with open(os.path.join(out_dir, "truth.json"), "w") as out:
        json.dump(truth, out)
    return truth


_PHOTOS = None
MAX_PACK_PRINTS = 8


def _work(job):
    global _PHOTOS
    seed, split, width, height, cache, mode, out, photo_tables, instances, overlap_rate, hands = job
    if _PHOTOS is None:
        _PHOTOS = dr_photos.photo_set(split, cache)
    frame, corners, scene = render(seed, _PHOTOS, width, height, split, photo_tables=photo_tables,
                                   instances=instances, overlap_rate=overlap_rate, hands=hands)
    if mode == "stills":
        name = f"scene_{seed % 1_000_000:05d}.png"
        cv2.imwrite(os.path.join(out, name), cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
        scene["file"] = name
        return scene
    return cnn_input(frame), targets(corners, width, height), corners


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["stills", "pack", "sequence", "hands"])
    parser.add_argument("--split", choices=["train", "heldout"], required=True)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--photo-tables", type=float, default=0.0,
                        help="pack --split train: this fraction of scenes have a photograph as the table")
    parser.add_argument("--overlap-rate", type=float, default=0.3,
                        help="pack --split train: how often a scene of two or more prints lets them overlap "
                             "(the stills and the held-out set keep 0.3)")
    parser.add_argument("--texture-instances", default="", metavar="LO:HI",
                        help="stills/pack: draw table texture instances LO..HI-1 of the split's seed space "
                             f"(0 <= LO < HI <= {dr_textures.MAX_INSTANCES}; default 0:{dr_textures.INSTANCES_PER_KIND['train']} "
                             f"for train, 0:{dr_textures.INSTANCES_PER_KIND['heldout']} for heldout)")
    parser.add_argument("--hands", choices=HAND_STYLES, default="plain",
                        help="stills/pack: plain (the generator's first hand, every committed benchmark's) or arms "
                             "(the same hands with a thumb, unequal fingers and a forearm to the frame's edge, bare "
                             "or sleeved; the scenes' other draws unchanged)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cache", default=os.environ.get("COLORCAM_SCENE_CACHE", ".build/scenes-cache"))
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if args.photo_tables and (args.mode != "pack" or args.split != "train"):
        parser.error("--photo-tables is for training packs only (pack --split train)")
    if args.overlap_rate != 0.3 and (args.mode != "pack" or args.split != "train"):
        parser.error("--overlap-rate is for training packs only (pack --split train)")
    if not 0 <= args.overlap_rate <= 1:
        parser.error(f"--overlap-rate {args.overlap_rate}: must be in 0..1")
    try:
        training = args.mode == "pack" and args.split == "train"
        instances = (dr_textures.training_instance_range(args.texture_instances) if training
                     else dr_textures.instance_range(args.texture_instances, args.split))
    except ValueError as e:
        parser.error(str(e))
    photos = dr_photos.photo_set(args.split, args.cache)  # fetch and cache once, before the workers start
    if args.mode == "sequence":
        render_sequence(args.seed, photos, width, height, args.split, 30, args.out)
        return
    if args.mode == "hands":
        render_hand_sequence(args.seed, photos, width, height, args.split, 30, args.out)
        return
    if args.mode == "pack" and args.seed in TUNING_SEEDS:
        parser.error(f"--seed {args.seed}: seeds {TUNING_SEEDS.start}-{TUNING_SEEDS.stop - 1} are the tuning sets' "
                     "(detect_heldout.py --split train); a training pack must not hold their scenes")
    seeds = [args.seed * 1_000_000 + i for i in range(args.count)]
    if args.mode == "stills":
        os.makedirs(args.out, exist_ok=True)
    jobs = [(s, args.split, width, height, args.cache, args.mode, args.out, args.photo_tables, instances,
             args.overlap_rate, args.hands)
            for s in seeds]
    results = []
    with Pool(args.workers) as pool:
        for k, r in enumerate(pool.imap(_work, jobs, chunksize=4)):
            results.append(r)
            if (k + 1) % 200 == 0:
                print(f"dr_render: {k + 1}/{args.count}", file=sys.stderr, flush=True)
    if args.mode == "stills":
        with open(os.path.join(args.out, "truth.json.partial"), "w") as out:
            json.dump({"split": args.split, "seed": args.seed, "texture_instances": list(instances),
                       "hands": args.hands, "scenes": results}, out)
        os.replace(os.path.join(args.out, "truth.json.partial"), os.path.join(args.out, "truth.json"))
    else:
        x = np.stack([r[0] for r in results])
        y = np.stack([r[1] for r in results])
        quads = np.full((len(results), MAX_PACK_PRINTS, 4, 2), np.nan, np.float32)  # bottom to top, NaN after
        for k, r in enumerate(results):
            for i, c in enumerate(r[2][:MAX_PACK_PRINTS]):
                quads[k, i] = np.asarray(c, np.float32)
        np.savez(args.out + ".partial.npz", X=x, Y=y, prints=np.array([len(r[2]) for r in results]), corners=quads)
        os.replace(args.out + ".partial.npz", args.out)


if __name__ == "__main__":
    main()
