"""Hands for the domain-randomized scenes (dr_render.py): a hand reaching over one side of a print.

`draw_hand(rng, corners, width, height)` is the generator's hand since it was written: a palm outside the print and
2–5 fingers reaching in, in one of seven skin tones. It floats: nothing joins it to the frame's edge.

`draw_hand(..., arm_rng=…)` is the same hand — the same draws from `rng`, so a scene keeps every other draw — with
what a person's hand over a table also has, drawn from `arm_rng` alone: a thumb at one side of the palm, fingers of
unequal length, and a forearm from the palm out past the frame's edge, bare or in a sleeve (a cloth colour, with the
skin ending at the wrist). `dr_render.py stills|pack --hands arms` draws these; `plain` (the default) keeps the
committed benchmarks' scenes byte for byte.
"""
import math

import cv2
import numpy as np

SKIN = [(250, 220, 195), (235, 195, 160), (215, 165, 125), (190, 135, 95), (150, 100, 65), (105, 70, 45),
        (70, 45, 30)]
HAND_STYLES = ("plain", "arms")


def _line(mask, a, b, thickness_px):
    """A round-capped stroke from a to b (frame px) on the twice-size canvas `mask`."""
    cv2.line(mask, tuple(np.round(np.asarray(a) * 2 * 4).astype(int)), tuple(np.round(np.asarray(b) * 2 * 4).astype(int)),
             1.0, thickness=max(2, int(thickness_px * 2)), lineType=cv2.LINE_AA, shift=2)


def draw_hand(rng, corners, width, height, arm_rng=None):
    """A hand reaching over one side of the print at `corners`: returns (coverage mask float32, RGB float32).
    With `arm_rng`, also a thumb, unequal fingers and a forearm to past the frame's edge (drawn from `arm_rng` only:
    `rng` is drawn exactly as without it)."""
    corners = np.asarray(corners)
    centre = corners.mean(axis=0)
    side = int(rng.integers(4))
    a, b = corners[side], corners[(side + 1) % 4]
    along = (b - a) / (np.linalg.norm(b - a) + 1e-9)
    out = centre - (a + b) / 2
    out = -out / (np.linalg.norm(out) + 1e-9)  # pointing away from the print
    size = math.sqrt(abs(cv2.contourArea(corners.astype(np.float32))))
    base = a + (b - a) * rng.uniform(0.2, 0.8)
    reach = rng.uniform(0.05, 0.35) * size
    finger_w = rng.uniform(0.045, 0.09) * size
    mask = np.zeros((height * 2, width * 2), np.float32)
    n = int(rng.integers(2, 6))
    spread = finger_w * rng.uniform(1.0, 1.4)
    tilt = rng.uniform(-0.4, 0.4)
    dirv = -out * math.cos(tilt) + along * math.sin(tilt)
    palm = base + out * rng.uniform(0.3, 0.6) * size
    for i in range(n):
        offset = (i - (n - 1) / 2) * spread
        root = base + along * offset + out * finger_w
        # A person's fingers differ in length (the middle ones longest); the plain hand's are drawn alike.
        length = 1.0 if arm_rng is None else 1.0 - 0.35 * abs(i - (n - 1) / 2) / max(1.0, (n - 1) / 2) \
            * arm_rng.uniform(0.5, 1.0)
        tip = root + dirv * reach * rng.uniform(0.75, 1.05) * length
        _line(mask, tip, palm, finger_w)
    axes = (int(size * rng.uniform(0.25, 0.4) * 2), int(size * rng.uniform(0.18, 0.3) * 2))
    angle = math.degrees(math.atan2(out[1], out[0]))
    cv2.ellipse(mask, tuple(np.round(palm * 2).astype(int)), axes, angle, 0, 360, 1.0, -1, cv2.LINE_AA)
    sleeve = None
    if arm_rng is not None:
        # The thumb: from the palm's side, turned 25-65 degrees from the fingers towards that side.
        sign = 1.0 if arm_rng.random() < 0.5 else -1.0
        theta = arm_rng.uniform(0.45, 1.15)
        thumb_root = palm + along * sign * axes[1] / 2 * arm_rng.uniform(0.6, 0.95) - out * axes[0] / 2 * 0.2
        thumb_dir = dirv * math.cos(theta) + along * sign * math.sin(theta)
        thumb_tip = thumb_root + thumb_dir * size * arm_rng.uniform(0.15, 0.32)
        _line(mask, thumb_root, thumb_tip, finger_w * arm_rng.uniform(1.1, 1.5))
        # The forearm: from the palm, away from the print (give or take 30 degrees), out past the frame's edge.
        turn = arm_rng.uniform(-0.5, 0.5)
        arm_dir = out * math.cos(turn) + along * math.sin(turn)
        wrist = palm + arm_dir * axes[0] / 2 * 0.9
        far = palm + arm_dir * 2.5 * max(width, height)
        arm_w = axes[1] * arm_rng.uniform(0.75, 1.05)  # the canvas' axes are twice the frame's: this is 2 × half
        _line(mask, wrist - arm_dir * axes[0] / 4, far, arm_w)
        if arm_rng.random() < 0.5:
            sleeve = np.zeros((height * 2, width * 2), np.float32)
            cuff = wrist + arm_dir * size * arm_rng.uniform(0.1, 0.5)
            _line(sleeve, cuff, far, arm_w * arm_rng.uniform(1.1, 1.4))
            _line(mask, cuff, far, arm_w * 1.45)
    mask = cv2.resize(mask, (width, height), interpolation=cv2.INTER_AREA)
    mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(0.4, 1.2))
    skin = np.array(SKIN[int(rng.integers(len(SKIN)))], np.float32) * rng.uniform(0.85, 1.1, 3)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    shade = 1 + 0.15 * (((xx - palm[0]) * along[0] + (yy - palm[1]) * along[1]) / (size + 1))
    texture = 1 + cv2.GaussianBlur(rng.standard_normal((height, width)).astype(np.float32), (0, 0), 2) * 0.03
    rgb = skin[None, None, :] * (shade * texture)[..., None]
    if sleeve is not None:
        cloth = arm_rng.uniform(15, 235, 3).astype(np.float32)
        weave = 1 + cv2.GaussianBlur(arm_rng.standard_normal((height, width)).astype(np.float32), (0, 0), 1) * 0.06
        sleeve = np.clip(cv2.resize(sleeve, (width, height), interpolation=cv2.INTER_AREA), 0, 1)[..., None]
        rgb = rgb * (1 - sleeve) + cloth[None, None, :] * (shade * weave)[..., None] * sleeve
    return np.clip(mask, 0, 1), rgb
