#!/usr/bin/env python3
"""Scene renderer for the detect tests and benchmarks: prints (real photos) on textured tables, deterministic from
a seed, with ground-truth corners.

  render.py scenes   --set tuning|benchmark --count N --seed S --out DIR [--size 640x480]
      writes DIR/scene_00000.png … and DIR/truth.json ({"scenes":[{"file","width","height","photos":[…]}]})
  render.py sequence --set tuning|benchmark --seed S --seconds 10 --out DIR [--fps 30] [--size 640x480]
      writes DIR/sequence.y4m (420jpeg, BT.601 full range) and DIR/truth.json (per-frame corners)

Corners are in pixels, the image spanning [0, W] × [0, H] (pixel i's centre at i + 0.5), clockwise from the corner
nearest the image's top-left. A print's "size" is its rectified size in pixels (the aspect the detector should
recover). Scenes hold 0–4 prints, white borders or none, greyscale / sepia / colour, random rotation and camera
perspective, drop shadows, lighting gradients, partial occlusion by a finger-like blob, blur, noise and JPEG.
"""
import argparse
import json
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import photos as photo_sets  # noqa: E402
import textures  # noqa: E402


def order_corners(corners):
    """Clockwise on screen (y down), starting at the corner nearest (0, 0)."""
    pts = np.asarray(corners, np.float64)
    area = sum(pts[i, 0] * pts[(i + 1) % 4, 1] - pts[(i + 1) % 4, 0] * pts[i, 1] for i in range(4))
    if area < 0:
        pts = pts[::-1]
    start = int(np.argmin((pts ** 2).sum(axis=1)))
    return np.roll(pts, -start, axis=0)


def apply_h(h, pts):
    pts = np.asarray(pts, np.float64)
    ph = np.concatenate([pts, np.ones((len(pts), 1))], axis=1) @ h.T
    return ph[:, :2] / ph[:, 2:3]


def translate(dx, dy):
    return np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], np.float64)


def cv_matrix(h):
    """Our continuous coordinates put pixel centres at +0.5; OpenCV puts them at integers."""
    return translate(-0.5, -0.5) @ h @ translate(0.5, 0.5)


def camera_homography(rng, width, height, strength):
    """Table plane → image: the image rectangle's corners moved inwards by up to `strength` × size."""
    src = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    jitter = rng.uniform(0, strength, (4, 2)) * np.array([width, height])
    sign = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]])
    dst = (src + sign * jitter).astype(np.float32)
    # Zoom back out a little so the table still fills the frame after the inward move.
    return np.linalg.inv(cv2.getPerspectiveTransform(dst, src).astype(np.float64))


def make_print(rng, photo, long_px):
    """Crops `photo` to a random aspect, optionally greys/sepias it and adds a white border.
    Returns (float32 RGB print image at about long_px on its long side, border fraction, style)."""
    h, w = photo.shape[:2]
    aspect = rng.uniform(0.55, 1.0)  # short / long
    portrait = rng.random() < 0.4
    target = aspect if w >= h else 1.0 / aspect
    if portrait:
        target = 1.0 / target
    # Crop a region with width/height == target.
    if w / h > target:
        cw, ch = int(round(h * target)), h
    else:
        cw, ch = w, int(round(w / target))
    x0, y0 = rng.integers(0, w - cw + 1), rng.integers(0, h - ch + 1)
    crop = photo[y0:y0 + ch, x0:x0 + cw].astype(np.float32)
    style_roll = rng.random()
    if style_roll < 0.55:
        grey = crop @ np.array([0.299, 0.587, 0.114], np.float32)
        crop = np.repeat(grey[..., None], 3, axis=2)
        style = "grey"
    elif style_roll < 0.75:
        grey = crop @ np.array([0.299, 0.587, 0.114], np.float32)
        crop = np.clip(grey[..., None] * np.array([1.07, 0.95, 0.78], np.float32) + 10, 0, 255)
        style = "sepia"
    else:
        style = "colour"
    contrast = rng.uniform(0.75, 1.0)
    crop = 128 + (crop - 128) * contrast
    border = 0.0
    if rng.random() < 0.5:
        border = rng.uniform(0.03, 0.08)
        pad = int(round(border * max(cw, ch)))
        paper = rng.uniform(228, 250) * np.array([1.0, 0.99, 0.95], np.float32)
        framed = np.empty((ch + 2 * pad, cw + 2 * pad, 3), np.float32)
        framed[:] = paper
        framed[pad:pad + ch, pad:pad + cw] = crop
        crop = framed
    scale = long_px / max(crop.shape[:2])
    size = (max(2, int(round(crop.shape[1] * scale))), max(2, int(round(crop.shape[0] * scale))))
    resized = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
    return resized, border, style


class Placement:
    """One print on the table: its image and its table-plane homography (print pixels → table)."""

    def __init__(self, image, table_h, name, border, style):
        self.image, self.table_h, self.name, self.border, self.style = image, table_h, name, border, style

    def corners_table(self):
        h, w = self.image.shape[:2]
        return apply_h(self.table_h, [[0, 0], [w, 0], [w, h], [0, h]])


def place_prints(rng, photos, width, height, camera, count):
    placements = []
    occupied = np.zeros((height, width), np.uint8)
    short = min(width, height)
    for _ in range(count):
        name, photo = photos[rng.integers(len(photos))]
        long_frac = rng.uniform(0.32, 0.6) if count <= 2 else rng.uniform(0.26, 0.42)
        image, border, style = make_print(rng, photo, long_frac * short)
        ph, pw = image.shape[:2]
        for _attempt in range(60):
            angle = rng.uniform(0, 2 * np.pi) if rng.random() < 0.5 else rng.uniform(-0.35, 0.35)
            cx, cy = rng.uniform(0, width), rng.uniform(0, height)
            c, s = np.cos(angle), np.sin(angle)
            table_h = translate(cx, cy) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ translate(-pw / 2, -ph / 2)
            corners = apply_h(camera @ table_h, [[0, 0], [pw, 0], [pw, ph], [0, ph]])
            margin = 6
            if (corners[:, 0].min() < margin or corners[:, 1].min() < margin
                    or corners[:, 0].max() > width - margin or corners[:, 1].max() > height - margin):
                continue
            mask = np.zeros_like(occupied)
            cv2.fillConvexPoly(mask, np.round(corners * 4).astype(np.int32), 1, shift=2)
            grown = cv2.dilate(mask, np.ones((17, 17), np.uint8))  # prints lie at least 8 px apart
            if (grown & occupied).any():
                continue
            occupied |= mask
            placements.append(Placement(image, table_h, name, border, style))
            break
    return placements


def warp_print(placement, h_image, width, height):
    """Returns (warped RGB float32, coverage mask float32) of a print under print→image homography h_image."""
    m = cv_matrix(h_image)
    img = cv2.warpPerspective(placement.image, m, (width, height), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    ones = np.ones(placement.image.shape[:2], np.float32)
    # Coverage: warp a mask with a half-pixel zero rim so the edge pixels get fractional coverage.
    padded = cv2.copyMakeBorder(ones, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    mask = cv2.warpPerspective(padded, cv_matrix(h_image @ translate(-1, -1)), (width, height),
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return img, mask


class SceneStyle:
    """Everything random about a scene except the prints' placement; fixed across a sequence's frames."""

    def __init__(self, rng, width, height):
        self.table, self.table_info = textures.table(rng, height + 80, width + 80)
        self.shadow_offset = rng.uniform(1, 5, 2) * rng.choice([-1, 1], 2)
        self.shadow_sigma = rng.uniform(2, 5)
        self.shadow_strength = rng.uniform(0.2, 0.45)
        self.light_angle = rng.uniform(0, 2 * np.pi)
        self.light_amount = rng.uniform(-0.3, 0.3)
        self.blur_sigma = rng.uniform(0, 1.1) if rng.random() < 0.7 else 0.0
        self.noise_sigma = rng.uniform(0.5, 4.5)
        self.jpeg_quality = int(rng.integers(55, 95)) if rng.random() < 0.6 else None
        self.occlude = rng.random() < 0.15
        self.occluder_colour = rng.choice([np.array([224, 172, 140]), np.array([150, 100, 70]),
                                           np.array([40, 40, 45])])


def compose(rng, style, placements, camera, width, height, occluder_seed):
    """Renders one frame; returns (uint8 RGB image, list of ground-truth dicts)."""
    table_view = cv2.warpPerspective(style.table, cv_matrix(camera @ translate(-40, -40)), (width, height),
                                     flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    frame = table_view
    truths = []
    warped = []
    for placement in placements:
        h_image = camera @ placement.table_h
        img, mask = warp_print(placement, h_image, width, height)
        warped.append((img, mask))
        shifted = cv2.warpAffine(mask, np.float32([[1, 0, style.shadow_offset[0]], [0, 1, style.shadow_offset[1]]]),
                                 (width, height))
        shadow = cv2.GaussianBlur(shifted, (0, 0), style.shadow_sigma)
        frame = frame * (1 - style.shadow_strength * shadow)[..., None]
        ph, pw = placement.image.shape[:2]
        corners = order_corners(apply_h(h_image, [[0, 0], [pw, 0], [pw, ph], [0, ph]]))
        truths.append({"corners": corners.round(3).tolist(), "size": [pw, ph], "photo": placement.name,
                       "border": round(placement.border, 4), "style": placement.style, "occluded": False})
    for img, mask in warped:
        frame = frame * (1 - mask[..., None]) + img * mask[..., None]
    if style.occlude and truths:
        orng = np.random.default_rng(occluder_seed)
        target = int(orng.integers(len(truths)))
        corners = np.array(truths[target]["corners"])
        side = int(orng.integers(4))
        a, b = corners[side], corners[(side + 1) % 4]
        t = orng.uniform(0.35, 0.65)
        edge_point = a + t * (b - a)
        centre = corners.mean(axis=0)
        outward = edge_point - centre
        outward /= np.linalg.norm(outward) + 1e-9
        length = np.linalg.norm(b - a)
        finger_w = orng.uniform(0.08, 0.14) * length
        depth = orng.uniform(0.06, 0.14) * np.linalg.norm(corners[2] - corners[0])
        tip = edge_point - outward * depth
        far = edge_point + outward * 400
        mask = np.zeros((height, width), np.float32)
        cv2.line(mask, tuple(np.round(tip * 4).astype(int)), tuple(np.round(far * 4).astype(int)), 1.0,
                 thickness=max(1, int(finger_w)), lineType=cv2.LINE_AA, shift=2)
        mask = cv2.GaussianBlur(mask, (0, 0), 1.0)
        shade = 1 + 0.15 * np.linspace(-1, 1, width)[None, :]
        finger = style.occluder_colour[None, None, :] * shade[..., None]
        frame = frame * (1 - mask[..., None]) + finger * mask[..., None]
        truths[target]["occluded"] = True
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    ramp = ((xx - width / 2) * np.cos(style.light_angle) + (yy - height / 2) * np.sin(style.light_angle))
    ramp /= np.hypot(width, height) / 2
    frame = frame * (1 + style.light_amount * ramp)[..., None]
    if style.blur_sigma > 0.05:
        frame = cv2.GaussianBlur(frame, (0, 0), style.blur_sigma)
    frame = frame + rng.standard_normal(frame.shape).astype(np.float32) * style.noise_sigma
    frame = np.clip(frame + 0.5, 0, 255).astype(np.uint8)
    if style.jpeg_quality is not None:
        ok, data = cv2.imencode(".jpg", cv2.cvtColor(frame, cv2.COLOR_RGB2BGR),
                                [cv2.IMWRITE_JPEG_QUALITY, style.jpeg_quality])
        frame = cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    return frame, truths


def render_scene(seed, photos, width, height):
    """One still scene, fully determined by `seed`. Returns (uint8 RGB, scene dict without "file")."""
    rng = np.random.default_rng(seed)
    style = SceneStyle(rng, width, height)
    camera = camera_homography(rng, width, height, rng.uniform(0.0, 0.12))
    count = int(rng.choice([0, 1, 1, 2, 2, 3, 4]))
    placements = place_prints(rng, photos, width, height, camera, count)
    frame, truths = compose(rng, style, placements, camera, width, height, seed + 7)
    scene = {"seed": seed, "width": width, "height": height, "table": style.table_info, "photos": truths,
             "blur_sigma": round(style.blur_sigma, 3), "noise_sigma": round(style.noise_sigma, 3),
             "jpeg_quality": style.jpeg_quality}
    return frame, scene


def write_y4m_frame(handle, rgb):
    """Appends one frame as 420jpeg (BT.601 full range, 2×2 chroma averaging)."""
    f = rgb.astype(np.float32)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
    cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
    h, w = y.shape
    ch, cw = (h + 1) // 2, (w + 1) // 2

    def sub(plane):
        padded = np.pad(plane, ((0, 2 * ch - h), (0, 2 * cw - w)), mode="edge")
        return padded.reshape(ch, 2, cw, 2).mean(axis=(1, 3))

    handle.write(b"FRAME\n")
    for plane in (y, sub(cb), sub(cr)):
        handle.write(np.clip(plane + 0.5, 0, 255).astype(np.uint8).tobytes())


def render_sequence(seed, photos, width, height, fps, seconds, out_dir):
    """A clip with camera motion: most prints lie still on the table, one slides. Writes sequence.y4m + truth.json."""
    rng = np.random.default_rng(seed)
    style = SceneStyle(rng, width, height)
    style.occlude = False
    base_camera = camera_homography(rng, width, height, rng.uniform(0.02, 0.08))
    count = int(rng.integers(2, 4))
    # Place on a slightly shrunk frame so camera motion keeps prints inside.
    inset = translate(width * 0.08, height * 0.08) @ np.diag([0.84, 0.84, 1.0])
    placements = place_prints(rng, photos, width, height, base_camera @ inset, count)
    for p in placements:
        p.table_h = inset @ p.table_h
    mover = int(rng.integers(len(placements))) if placements else -1
    frames = int(round(fps * seconds))
    amp_t = rng.uniform(8, 18)
    amp_r = np.radians(rng.uniform(0.5, 2.0))
    # The sliding print stays fully in view: shrink its speed until its path (± camera shake) stays 10 px inside.
    velocity = rng.uniform(-1, 1, 2)
    velocity = velocity / (np.linalg.norm(velocity) + 1e-9) * rng.uniform(15, 35)  # px per second on the table
    if mover >= 0:
        for _ in range(12):
            travel = velocity * seconds / 4
            corners = placements[mover].corners_table()
            reach = np.concatenate([corners - travel, corners + travel])
            img = apply_h(base_camera, reach)
            margin = 10 + amp_t
            if (img[:, 0].min() >= margin and img[:, 1].min() >= margin and img[:, 0].max() <= width - margin
                    and img[:, 1].max() <= height - margin):
                break
            velocity *= 0.7
    truth = {"seed": seed, "width": width, "height": height, "fps": fps, "mover": mover, "frames": []}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "sequence.y4m"), "wb") as handle:
        handle.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(frames):
            t = index / fps
            phase = 2 * np.pi * t / seconds
            dx, dy = amp_t * np.sin(phase), amp_t * 0.6 * np.sin(2 * phase)
            rot = amp_r * np.sin(phase * 1.5)
            c, s = np.cos(rot), np.sin(rot)
            motion = translate(width / 2 + dx, height / 2 + dy) @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) \
                @ translate(-width / 2, -height / 2)
            camera = base_camera @ motion
            moved = []
            for i, p in enumerate(placements):
                shift = translate(*(velocity * (t - seconds / 2) * 0.5)) if i == mover else np.eye(3)
                moved.append(Placement(p.image, shift @ p.table_h, p.name, p.border, p.style))
            frame, truths = compose(rng, style, moved, camera, width, height, 0)
            write_y4m_frame(handle, frame)
            truth["frames"].append({"frame": index, "photos": truths})
    with open(os.path.join(out_dir, "truth.json"), "w") as out:
        json.dump(truth, out)
    return truth


def parse_size(text):
    w, h = text.lower().split("x")
    return int(w), int(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["scenes", "sequence"])
    parser.add_argument("--set", choices=["tuning", "benchmark"], required=True)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cache", default=os.environ.get("COLORCAM_SCENE_CACHE", ".build/scenes-cache"))
    args = parser.parse_args()
    width, height = parse_size(args.size)
    photos = photo_sets.photo_set(args.set, args.cache)
    os.makedirs(args.out, exist_ok=True)
    if args.mode == "scenes":
        scenes = []
        for i in range(args.count):
            frame, scene = render_scene(args.seed * 100_003 + i, photos, width, height)
            name = f"scene_{i:05d}.png"
            cv2.imwrite(os.path.join(args.out, name), cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
            scene["file"] = name
            scenes.append(scene)
        with open(os.path.join(args.out, "truth.json"), "w") as out:
            json.dump({"set": args.set, "seed": args.seed, "scenes": scenes}, out)
    else:
        render_sequence(args.seed, photos, width, height, args.fps, args.seconds, args.out)


if __name__ == "__main__":
    main()
