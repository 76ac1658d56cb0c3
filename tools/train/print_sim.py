"""What the colorizer sees in the product: a photo printed as an old print, filmed by a webcam, rectified.

    seen_L, target_ab = print_view(rng, lab_view)

`lab_view` is the photo (Lab, float32 (H, W, 3)) already squashed to the model's square input, as the product
squashes a rectified print to 256 x 256. The print is rendered from the photo's colours, as a darkroom would: a
black-and-white emulsion of random spectral sensitivity (panchromatic to orthochromatic, which renders red dark and
blue light), a random tone curve, toning (sepia, selenium, cool, warm: the detect generator's tones), faded blacks
and whites, paper grain, sometimes a white or cream border. The camera then sees it under a lighting gradient,
vignetting, glare, a white balance and an exposure, at a random size on the sensor (40–400 px along the print's
long side, a quarter of them under 80 px, so the rectified view is upsampled), slightly out of focus, with sensor
noise and JPEG, through a perspective that the product's rectification undoes with a corner error of up to ~1.5
camera pixels. Sometimes a skin-toned hand lies over part of the print: there the target is neutral (ab 0), so the
model learns not to invent colour where the picture is covered. The border's target is neutral too.

Every factor is drawn per sample, widely; nothing is tuned on held-out photos. Returns the L the model is fed
(float32, 0..100) and the ab target (float32 (H, W, 2)).

    hint_ab, hint_mask = simulate_hints(rng, target_ab)

Zhang, Zhu et al. 2017's user-hint simulation: a geometric number of points (p = 1/8, often none), centre-biased
(normal around the centre, sigma = a quarter of the side), each a patch of 1–9 px revealing the target's mean ab.
"""
import math
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenes"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dr_render import SKIN, TONES  # noqa: E402  the detect generator's print tones and skin tones
from labcolor import lab2rgb, rgb2lab  # noqa: E402


def _emulsion(rng, rgb):
    """Colour photo (H, W, 3) in [0, 1] -> black-and-white print density in [0, 1]: random spectral weights."""
    r = rng.random()
    if r < 0.2:  # orthochromatic: blind to red
        w = np.array([rng.uniform(0.0, 0.15), rng.uniform(0.3, 0.6), rng.uniform(0.3, 0.7)])
    elif r < 0.35:  # red-filtered
        w = np.array([rng.uniform(0.4, 0.7), rng.uniform(0.3, 0.5), rng.uniform(0.0, 0.1)])
    else:  # panchromatic, around luma
        w = np.array([0.299, 0.587, 0.114]) * rng.uniform(0.6, 1.4, 3)
    w = w / w.sum()
    grey = rgb @ w.astype(np.float32)
    gamma = math.exp(rng.uniform(-0.4, 0.4))
    return np.clip(grey, 0, 1) ** gamma


def _hand(rng, h, w):
    """A skin-toned hand over one edge of the view: mask (H, W) float32 in [0, 1], colour (3,) in [0, 1]."""
    mask = np.zeros((h, w), np.float32)
    side = int(rng.integers(4))
    depth = rng.uniform(0.1, 0.35)
    along = rng.uniform(0.2, 0.8)
    width = rng.uniform(0.15, 0.35)
    # palm: an ellipse entering from one side; fingers: thick lines further in
    if side in (0, 1):
        cx, cy = along * w, (0 if side == 0 else h)
        ax, ay = width * w / 2, depth * h
        direction = (0, 1 if side == 0 else -1)
    else:
        cx, cy = (0 if side == 2 else w), along * h
        ax, ay = depth * w, width * h / 2
        direction = (1 if side == 2 else -1, 0)
    cv2.ellipse(mask, (int(cx), int(cy)), (max(2, int(ax)), max(2, int(ay))), 0, 0, 360, 1.0, -1, cv2.LINE_AA)
    reach = depth * (h if direction[1] else w)
    for _ in range(int(rng.integers(0, 5))):
        off = rng.uniform(-0.6, 0.6) * width * (w if direction[1] else h) / 2
        length = reach * rng.uniform(1.1, 1.8)
        x0 = cx + (off if direction[1] else 0)
        y0 = cy + (0 if direction[1] else off)
        x1, y1 = x0 + direction[0] * length, y0 + direction[1] * length
        cv2.line(mask, (int(x0), int(y0)), (int(x1), int(y1)), 1.0, max(2, int(0.05 * min(h, w))), cv2.LINE_AA)
    skin = np.array(SKIN[int(rng.integers(len(SKIN)))], np.float32) / 255 * rng.uniform(0.85, 1.1)
    return cv2.GaussianBlur(mask, (0, 0), 1.0), np.clip(skin, 0, 1)


def print_view(rng, lab_view):
    h, w = lab_view.shape[:2]
    rgb = lab2rgb(lab_view).astype(np.float32)
    target = lab_view[..., 1:].astype(np.float32).copy()
    style = rng.random()
    if style < 0.1:  # a colour print, faded: the product colorizes those too (it cannot tell)
        paper = rgb * rng.uniform(0.7, 1.0)
    else:
        grey = _emulsion(rng, rgb)
        if style < 0.55:
            paper = np.repeat(grey[..., None], 3, axis=2)
        else:
            tone = np.array(list(TONES.values())[int(rng.integers(len(TONES)))], np.float32)
            paper = grey[..., None] * tone ** rng.uniform(0.5, 2.0) + rng.uniform(0, 0.06)
    faded = rng.random() < 0.4
    lo, hi = (rng.uniform(0.1, 0.35), rng.uniform(0.72, 0.94)) if faded else (rng.uniform(0, 0.1), rng.uniform(0.88, 1))
    paper = lo + np.clip(paper, 0, 1) * (hi - lo)
    if rng.random() < 0.4:  # a white or cream border, part of the rectified print
        pad = max(1, int(round(rng.uniform(0.02, 0.1) * min(h, w))))
        cream = rng.uniform(0.84, 0.99) * np.array([1.0, rng.uniform(0.95, 1.0), rng.uniform(0.85, 1.0)], np.float32)
        inner = cv2.resize(paper, (w - 2 * pad, h - 2 * pad), interpolation=cv2.INTER_AREA)
        inner_t = cv2.resize(target, (w - 2 * pad, h - 2 * pad), interpolation=cv2.INTER_AREA)
        paper = np.empty_like(paper)
        paper[:] = cream
        paper[pad:h - pad, pad:w - pad] = inner
        target = np.zeros_like(target)
        target[pad:h - pad, pad:w - pad] = inner_t
    paper = paper + rng.standard_normal((h, w, 1)).astype(np.float32) * rng.uniform(0, 0.02)
    if rng.random() < 0.15:
        mask, skin = _hand(rng, h, w)
        shade = 0.85 + 0.3 * cv2.GaussianBlur(rng.random((h, w)).astype(np.float32), (0, 0), 6)[..., None]
        paper = paper * (1 - mask[..., None]) + skin * shade * mask[..., None]
        target = target * (1 - mask[..., None])
    # the camera: light, glare, white balance, exposure
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    ramp = ((xx / w - 0.5) * math.cos(ang) + (yy / h - 0.5) * math.sin(ang))
    light = 1 + ramp * rng.uniform(0, 0.6)
    if rng.random() < 0.5:
        light *= 1 - rng.uniform(0, 0.35) * (((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) * 2)
    cam = paper * light[..., None]
    if rng.random() < 0.25:
        gx, gy, gs = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.05, 0.3) * w
        cam = cam + rng.uniform(0.1, 0.6) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * gs * gs))[..., None]
    cam = cam * rng.uniform(0.85, 1.15, 3).astype(np.float32) * rng.uniform(0.6, 1.4)
    cam = np.clip(cam, 0, 1)
    # on the sensor: a perspective at a random size, blur, noise, JPEG; then rectified back with a corner error
    # the product's prints span ~40-400 px along their long side in a 640 x 480 frame (the detect generator's short
    # sides are 10-50 % of the frame's, foreshortened by tilt): a quarter of the draws are the small ones
    long_px = rng.uniform(40, 80) if rng.random() < 0.25 else rng.uniform(80, 400)
    s = long_px / max(h, w)
    cw, ch = max(16, int(round(w * s))), max(16, int(round(h * s)))
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[0, 0], [cw, 0], [cw, ch], [0, ch]]) + rng.uniform(-0.12, 0.12, (4, 2)).astype(np.float32) * [
        cw, ch]
    dst = (dst - dst.min(0)).astype(np.float32)
    size = (int(math.ceil(dst[:, 0].max())) + 1, int(math.ceil(dst[:, 1].max())) + 1)
    fwd = cv2.getPerspectiveTransform(src, dst)
    if s < 1:  # area-average what the sensor cannot resolve before sampling
        cam = cv2.GaussianBlur(cam, (0, 0), 0.5 / s)
    sensor = cv2.warpPerspective(cam, fwd, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if rng.random() < 0.6:
        sensor = cv2.GaussianBlur(sensor, (0, 0), rng.uniform(0.3, 1.5))
    sensor = sensor + rng.standard_normal(sensor.shape).astype(np.float32) * rng.uniform(0, 0.03)
    sensor8 = np.clip(sensor * 255 + 0.5, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        ok, enc = cv2.imencode(".jpg", sensor8, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 95))])
        sensor8 = cv2.imdecode(enc, cv2.IMREAD_UNCHANGED)
    found = (dst + rng.uniform(-1.5, 1.5, (4, 2))).astype(np.float32)
    back = cv2.getPerspectiveTransform(found, src)
    seen = cv2.warpPerspective(sensor8.astype(np.float32) / 255, back, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
    seen_L = rgb2lab(np.clip(seen, 0, 1))[..., 0].astype(np.float32)
    return seen_L, target


def simulate_hints(rng, target_ab, p_none=0.5):
    """(hint_ab (H, W, 2), mask (H, W)) float32: Zhang, Zhu et al. 2017's simulated user points."""
    h, w = target_ab.shape[:2]
    hint = np.zeros((h, w, 2), np.float32)
    mask = np.zeros((h, w), np.float32)
    if rng.random() < p_none:
        return hint, mask
    count = int(rng.geometric(1 / 8)) - 1
    for _ in range(count):
        y = int(np.clip(rng.normal(h / 2, h / 4), 0, h - 1))
        x = int(np.clip(rng.normal(w / 2, w / 4), 0, w - 1))
        r = int(rng.integers(0, 5))
        ys, xs = slice(max(0, y - r), y + r + 1), slice(max(0, x - r), x + r + 1)
        hint[ys, xs] = target_ab[ys, xs].reshape(-1, 2).mean(0)
        mask[ys, xs] = 1
    return hint, mask
