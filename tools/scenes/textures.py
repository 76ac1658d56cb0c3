"""Procedural table textures (wood, cloth, paper, plain), light or dark, deterministic from a numpy Generator."""
import numpy as np
import cv2


def _smooth_noise(rng, height, width, scale):
    """Value noise: random grid of (h/scale × w/scale) upsampled bicubically to (h, w), values ~ N(0, 1)."""
    gh, gw = max(2, int(height / scale) + 2), max(2, int(width / scale) + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)


def wood(rng, height, width, light):
    base = np.array([200, 160, 110] if light else [95, 58, 32], np.float32) * rng.uniform(0.85, 1.1)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, np.pi)
    along = xx * np.cos(angle) + yy * np.sin(angle)
    across = -xx * np.sin(angle) + yy * np.cos(angle)
    warp = _smooth_noise(rng, height, width, 80) * 12
    rings = np.sin((across + warp) / rng.uniform(4, 9)) * 0.5 + 0.5
    grain = _smooth_noise(rng, height, width, 3) * 0.05
    shade = 1.0 + 0.12 * (rings - 0.5) + grain + 0.04 * np.sin(along / 150.0)
    return base[None, None, :] * shade[..., None]


def cloth(rng, height, width, light):
    colour = rng.uniform(150, 230, 3) if light else rng.uniform(25, 110, 3)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    period = rng.uniform(2.5, 5)
    weave = (np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period)) * 0.06
    folds = _smooth_noise(rng, height, width, 60) * 0.06
    fibre = rng.standard_normal((height, width)).astype(np.float32) * 0.03
    shade = 1.0 + weave + folds + fibre
    return colour[None, None, :].astype(np.float32) * shade[..., None]


def paper(rng, height, width, light):
    level = rng.uniform(185, 225) if light else rng.uniform(60, 100)
    tint = rng.uniform(0.92, 1.04, 3)
    blotch = _smooth_noise(rng, height, width, 40) * 0.04 + _smooth_noise(rng, height, width, 6) * 0.02
    shade = 1.0 + blotch
    return (level * tint)[None, None, :].astype(np.float32) * shade[..., None]


def plain(rng, height, width, light):
    colour = rng.uniform(160, 215, 3) if light else rng.uniform(20, 80, 3)
    shade = 1.0 + _smooth_noise(rng, height, width, 120) * 0.03
    return colour[None, None, :].astype(np.float32) * shade[..., None]


KINDS = {"wood": wood, "cloth": cloth, "paper": paper, "plain": plain}


def table(rng, height, width):
    """Returns (float32 RGB image 0..255, description dict)."""
    kind = sorted(KINDS)[rng.integers(len(KINDS))]
    light = bool(rng.random() < 0.5)
    image = KINDS[kind](rng, height, width, light)
    return np.clip(image, 0, 255), {"kind": kind, "light": light}
