"""Table textures for the domain-randomized scene generator (dr_render.py): many families, each with instances.

An *instance* is a family plus everything drawn from its instance seed (colours, scales, plank widths, weave period,
vein layout …): `table(family, instance, split, rng, height, width)` draws it, and `rng` adds only what changes
between two photos of the same table (where the camera looks, small shading noise). Instance seeds of the train and
held-out splits come from disjoint seed spaces, so a held-out scene never shows a table instance training saw.

Families and the condition bucket each belongs to (the benchmark's per-bucket table):
  wood: planks, parquet, veneer · cloth: burlap, canvas, gingham, knit, leather · stone: granite, marble, slate,
  terrazzo · paper: paper, cork · carpet · plain-light · plain-dark · glossy · procedural (noise, stripes, tiles, dots)
"""
import cv2
import numpy as np

SPLIT_BASE = {"train": 1_000_000, "heldout": 9_000_000}
# How many instances a scene draws from by default. The seed space holds MAX_INSTANCES per kind and split; training
# and tuning may draw from sub-ranges of the train split's (`instance_range`, dr_render.py --texture-instances).
INSTANCES_PER_KIND = {"train": 40, "heldout": 1000}
MAX_INSTANCES = 10_000
# The train split's last 1 000 instances are validation tables: no training scene may lie on one (tuning sets of
# unseen tables: detect_heldout.py --split train --texture-instances 9000:10000).
VALIDATION_INSTANCES = (9_000, MAX_INSTANCES)


def instance_range(text, split):
    """(lo, hi) from "LO:HI" (None or "": the split's default 0:INSTANCES_PER_KIND); ValueError when out of range."""
    if not text:
        return 0, INSTANCES_PER_KIND[split]
    lo, _, hi = text.partition(":")
    try:
        lo, hi = int(lo), int(hi)
    except ValueError:
        lo = hi = -1
    if not 0 <= lo < hi <= MAX_INSTANCES:
        raise ValueError(f"texture instances {text!r}: want LO:HI with 0 <= LO < HI <= {MAX_INSTANCES}")
    return lo, hi


def training_instance_range(text):
    """`instance_range(text, "train")` for training scenes: ValueError also when it reaches the validation tables."""
    lo, hi = instance_range(text, "train")
    if hi > VALIDATION_INSTANCES[0]:
        raise ValueError(f"texture instances {text!r}: instances {VALIDATION_INSTANCES[0]}-"
                         f"{VALIDATION_INSTANCES[1] - 1} are the validation tables; training must not draw them")
    return lo, hi

KIND_BUCKET = {
    "planks": "wood", "parquet": "wood", "veneer": "wood",
    "burlap": "cloth", "canvas": "cloth", "gingham": "cloth", "knit": "cloth", "leather": "cloth",
    "granite": "stone", "marble": "stone", "slate": "stone", "terrazzo": "stone",
    "paper": "paper-cork", "cork": "paper-cork",
    "carpet": "carpet", "plain-light": "plain-light", "plain-dark": "plain-dark", "glossy": "glossy",
    "noise": "procedural", "stripes": "procedural", "tiles": "procedural", "dots": "procedural",
}
KINDS = sorted(KIND_BUCKET)


def _noise(rng, h, w, scale, octaves=1):
    """Fractal value noise ~N(0,1)-ish at feature size `scale` px."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for _ in range(octaves):
        gh, gw = max(2, int(h / scale) + 3), max(2, int(w / scale) + 3)
        grid = rng.standard_normal((gh, gw)).astype(np.float32)
        out += amp * cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= 0.5
        scale = max(1.0, scale / 2)
    return out / total


def _grid(h, w, angle):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c, s = np.cos(angle), np.sin(angle)
    return xx * c + yy * s, -xx * s + yy * c


def _colour(rng, lo, hi):
    return rng.uniform(lo, hi, 3).astype(np.float32)


def _wood_colour(rng):
    base = np.array([190, 140, 90], np.float32) * rng.uniform(0.35, 1.25)
    return np.clip(base * rng.uniform(0.9, 1.1, 3), 10, 250)


def _grain(rng, h, w, angle, period, warp):
    along, across = _grid(h, w, angle)
    wobble = _noise(rng, h, w, 90) * warp
    rings = np.sin((across + wobble + 0.02 * along) * 2 * np.pi / period) * 0.5 + 0.5
    streak = _noise(rng, h, w, 2.5) * 0.05
    return 1.0 + 0.18 * (rings ** 3 - 0.3) + streak


def planks(p, rng, h, w):
    colour = _wood_colour(p)
    angle = p.uniform(0, np.pi)
    width = p.uniform(40, 160)
    along, across = _grid(h, w, angle)
    plank = np.floor((across + rng.uniform(0, width)) / width)
    tone = 1 + 0.12 * np.sin(plank * 12.9898 + p.uniform(0, 9)) * p.uniform(0.3, 1.2)
    seam = np.abs(((across + 1e-3) % width) - 0) < p.uniform(0.8, 2.5)
    shade = _grain(rng, h, w, angle, p.uniform(3, 9), p.uniform(5, 20)) * tone
    shade = np.where(seam, shade * p.uniform(0.35, 0.7), shade)
    return colour * shade[..., None]


def parquet(p, rng, h, w):
    colour = _wood_colour(p)
    block = p.uniform(25, 70)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    bx, by = np.floor(xx / block), np.floor(yy / block)
    checker = ((bx + by) % 2).astype(bool)
    g1 = _grain(rng, h, w, 0.0, p.uniform(2.5, 6), 6)
    g2 = _grain(rng, h, w, np.pi / 2, p.uniform(2.5, 6), 6)
    shade = np.where(checker, g1, g2) * (1 + 0.1 * np.sin(bx * 7.1 + by * 3.7) * p.uniform(0.3, 1))
    seam = (np.minimum(xx % block, yy % block) < 1.2)
    shade = np.where(seam, shade * 0.6, shade)
    return colour * shade[..., None]


def veneer(p, rng, h, w):
    return _wood_colour(p) * _grain(rng, h, w, p.uniform(0, np.pi), p.uniform(8, 25), p.uniform(20, 60))[..., None]


def _weave(p, rng, h, w, period, irregular):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    jx = _noise(rng, h, w, 30) * irregular
    jy = _noise(rng, h, w, 30) * irregular
    wx = np.sin((xx + jx) * 2 * np.pi / period)
    wy = np.sin((yy + jy) * 2 * np.pi / period)
    over = (np.sign(np.sin(xx * np.pi / period) * np.sin(yy * np.pi / period)) > 0)
    return np.where(over, 0.5 + 0.5 * np.abs(wx), 0.5 + 0.5 * np.abs(wy))


def burlap(p, rng, h, w):
    colour = np.array([170, 140, 95], np.float32) * p.uniform(0.6, 1.2) * p.uniform(0.9, 1.1, 3)
    weave = _weave(p, rng, h, w, p.uniform(4, 8), p.uniform(0.5, 2.0))
    slub = _noise(rng, h, w, 4) * 0.08
    return np.clip(colour, 0, 255) * (0.75 + 0.3 * weave + slub)[..., None]


def canvas(p, rng, h, w):
    colour = _colour(p, 30, 235)
    weave = _weave(p, rng, h, w, p.uniform(2.2, 4), 0.3)
    folds = _noise(rng, h, w, 70) * 0.07
    return colour * (0.88 + 0.14 * weave + folds)[..., None]


def gingham(p, rng, h, w):
    a, b = _colour(p, 150, 250), _colour(p, 20, 200)
    period = p.uniform(12, 50)
    u, v = _grid(h, w, p.uniform(-0.2, 0.2) if p.random() < 0.7 else p.uniform(0, np.pi))
    su = ((u % period) < period / 2).astype(np.float32)
    sv = ((v % period) < period / 2).astype(np.float32)
    mix = (su + sv) / 2
    img = a * (1 - mix[..., None]) + b * mix[..., None]
    weave = _weave(p, rng, h, w, p.uniform(2, 3.5), 0.2)
    return img * (0.9 + 0.12 * weave)[..., None]


def knit(p, rng, h, w):
    colour = _colour(p, 25, 230)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    col = p.uniform(5, 10)
    row = col * p.uniform(0.6, 0.9)
    vx = (xx % col) / col - 0.5
    vy = ((yy + np.abs(vx) * row * 1.5) % row) / row
    stitch = np.exp(-((vy - 0.5) ** 2) / 0.06) * (1 - 2 * np.abs(vx) * 0.5)
    return colour * (0.7 + 0.45 * stitch + _noise(rng, h, w, 40) * 0.05)[..., None]


def leather(p, rng, h, w):
    colour = np.array([120, 70, 40], np.float32) * p.uniform(0.3, 1.6) * p.uniform(0.85, 1.15, 3)
    cells = np.abs(_noise(rng, h, w, p.uniform(3, 7)))
    creases = np.abs(_noise(rng, h, w, 40, 3)) < 0.04
    shade = 0.85 + 0.2 * np.exp(-cells * 3) - 0.2 * creases + _noise(rng, h, w, 80) * 0.06
    return np.clip(colour, 5, 250) * shade[..., None]


def granite(p, rng, h, w):
    base = _colour(p, 40, 200)
    img = np.repeat(base[None, None, :], h, 0).repeat(w, 1).astype(np.float32)
    for _ in range(int(p.integers(2, 5))):
        speck = _colour(p, 0, 255)
        density = p.uniform(0.08, 0.3)
        mask = (rng.random((h, w)) < density).astype(np.float32)
        mask = cv2.GaussianBlur(mask, (0, 0), p.uniform(0.6, 1.6))
        mask = np.clip(mask * 3, 0, 1)
        img = img * (1 - mask[..., None]) + speck * mask[..., None]
    return img


def marble(p, rng, h, w):
    base = _colour(p, 170, 245) if p.random() < 0.7 else _colour(p, 20, 80)
    vein = _colour(p, 40, 150) if base.mean() > 120 else _colour(p, 150, 240)
    u, _ = _grid(h, w, p.uniform(0, np.pi))
    turb = np.abs(_noise(rng, h, w, p.uniform(40, 120), 4)) * p.uniform(3, 8)
    v = np.abs(np.sin(u / p.uniform(20, 60) + turb)) ** p.uniform(6, 30)
    return base * (1 - v[..., None]) + vein * v[..., None] + _noise(rng, h, w, 30)[..., None] * 6


def slate(p, rng, h, w):
    colour = np.array([70, 75, 80], np.float32) * p.uniform(0.5, 1.4) * p.uniform(0.9, 1.1, 3)
    layers = _noise(rng, h, w, 25, 3) * 0.12
    cleft = np.abs(_noise(rng, h, w, 60, 2)) < 0.03
    return colour * (1 + layers - 0.25 * cleft)[..., None]


def terrazzo(p, rng, h, w):
    img = np.empty((h, w, 3), np.float32)
    img[:] = _colour(p, 120, 235)
    palette = [_colour(p, 0, 255) for _ in range(int(p.integers(2, 6)))]
    count = int(h * w / p.uniform(300, 1200))
    for _ in range(count):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        r = p.uniform(1.5, 9) * rng.uniform(0.5, 1.5)
        n = int(rng.integers(4, 8))
        ang = np.sort(rng.uniform(0, 2 * np.pi, n))
        pts = np.stack([cx + r * np.cos(ang) * rng.uniform(0.6, 1.2, n), cy + r * np.sin(ang) * rng.uniform(0.6, 1.2, n)], 1)
        cv2.fillPoly(img, [np.round(pts).astype(np.int32)], palette[int(rng.integers(len(palette)))].tolist())
    return img


def paper(p, rng, h, w):
    colour = _colour(p, 150, 240) * p.uniform(0.4, 1.05)
    blotch = _noise(rng, h, w, 40) * 0.04 + _noise(rng, h, w, 4) * 0.025
    return colour * (1 + blotch)[..., None]


def cork(p, rng, h, w):
    colour = np.array([175, 125, 80], np.float32) * p.uniform(0.7, 1.2) * p.uniform(0.9, 1.1, 3)
    gran = _noise(rng, h, w, p.uniform(1.5, 3.5))
    dark = (gran < -p.uniform(0.6, 1.2)).astype(np.float32)
    return colour * (1 + 0.15 * gran - 0.35 * dark)[..., None]


def carpet(p, rng, h, w):
    colour = _colour(p, 20, 220)
    pile = rng.standard_normal((h, w)).astype(np.float32)
    pile = cv2.GaussianBlur(pile, (0, 0), p.uniform(0.6, 1.3))
    pattern = 0.0
    if p.random() < 0.4:
        u, v = _grid(h, w, p.uniform(0, np.pi))
        pattern = (np.sin(u / p.uniform(10, 40)) * np.sin(v / p.uniform(10, 40)) > 0).astype(np.float32) * 0.25
    return colour * (0.9 + 0.18 * pile + pattern + _noise(rng, h, w, 50) * 0.05)[..., None]


def plain_light(p, rng, h, w):
    return _colour(p, 150, 245)[None, None, :] * (1 + _noise(rng, h, w, 150) * 0.02)[..., None]


def plain_dark(p, rng, h, w):
    return _colour(p, 8, 90)[None, None, :] * (1 + _noise(rng, h, w, 150) * 0.04)[..., None]


def glossy(p, rng, h, w):
    img = (_colour(p, 10, 120) if p.random() < 0.6 else _colour(p, 150, 240))[None, None, :] \
        * np.ones((h, w, 1), np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    for _ in range(int(p.integers(1, 3))):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        sx, sy = rng.uniform(30, 200), rng.uniform(15, 120)
        a = rng.uniform(0, np.pi)
        u = (xx - cx) * np.cos(a) + (yy - cy) * np.sin(a)
        v = -(xx - cx) * np.sin(a) + (yy - cy) * np.cos(a)
        img += (np.exp(-(u / sx) ** 2 - (v / sy) ** 2) * rng.uniform(40, 140))[..., None]
    # A blurred reflection of a window frame: soft bright bars.
    if p.random() < 0.5:
        u, _ = _grid(h, w, rng.uniform(0, np.pi))
        bars = (np.sin(u / rng.uniform(30, 90)) > 0.6).astype(np.float32)
        img += cv2.GaussianBlur(bars, (0, 0), 6)[..., None] * rng.uniform(15, 50)
    return img


def noise_tex(p, rng, h, w):
    a, b = _colour(p, 0, 255), _colour(p, 0, 255)
    t = np.clip(_noise(rng, h, w, p.uniform(3, 60), int(p.integers(1, 5))) * 0.5 + 0.5, 0, 1)
    return a * t[..., None] + b * (1 - t[..., None])


def stripes(p, rng, h, w):
    a, b = _colour(p, 0, 255), _colour(p, 0, 255)
    u, _ = _grid(h, w, p.uniform(0, np.pi))
    period = p.uniform(6, 80)
    t = (np.sin(u * 2 * np.pi / period) > p.uniform(-0.5, 0.5)).astype(np.float32)
    t = cv2.GaussianBlur(t, (0, 0), p.uniform(0.5, 3))
    return a * t[..., None] + b * (1 - t[..., None])


def tiles(p, rng, h, w):
    size = p.uniform(20, 120)
    grout = _colour(p, 40, 230)
    tile = _colour(p, 0, 255)
    u, v = _grid(h, w, p.uniform(-0.3, 0.3))
    gw = p.uniform(1, 5)
    g = ((u % size) < gw) | ((v % size) < gw)
    var = (1 + 0.12 * np.sin(np.floor(u / size) * 3.3 + np.floor(v / size) * 5.1))
    img = tile * var[..., None]
    img[g] = grout
    return img


def dots(p, rng, h, w):
    img = np.empty((h, w, 3), np.float32)
    img[:] = _colour(p, 0, 255)
    dot = _colour(p, 0, 255)
    r = p.uniform(2, 12)
    step = r * p.uniform(2.5, 5)
    for y in np.arange(rng.uniform(0, step), h, step):
        for x in np.arange(rng.uniform(0, step), w, step):
            cv2.circle(img, (int(x), int(y)), int(r), dot.tolist(), -1, lineType=cv2.LINE_AA)
    return img


DRAW = {"planks": planks, "parquet": parquet, "veneer": veneer, "burlap": burlap, "canvas": canvas,
        "gingham": gingham, "knit": knit, "leather": leather, "granite": granite, "marble": marble, "slate": slate,
        "terrazzo": terrazzo, "paper": paper, "cork": cork, "carpet": carpet, "plain-light": plain_light,
        "plain-dark": plain_dark, "glossy": glossy, "noise": noise_tex, "stripes": stripes, "tiles": tiles,
        "dots": dots}


def table(kind, instance, split, rng, height, width):
    """Draws table `kind`'s `instance` (0 ≤ instance < MAX_INSTANCES) of `split`.
    Returns (float32 RGB 0..255 of height × width, info dict)."""
    seed = SPLIT_BASE[split] + KINDS.index(kind) * MAX_INSTANCES + instance
    params = np.random.default_rng(seed)
    # The instance's own rng drives its layout too (same instance → same pattern up to where the camera looks).
    layout = np.random.default_rng(seed + 500_000)
    image = DRAW[kind](params, layout, height, width)
    # Which way round the camera sees it (no seam: flips only).
    if rng.random() < 0.5:
        image = image[::-1]
    if rng.random() < 0.5:
        image = image[:, ::-1]
    return np.clip(image, 0, 255).astype(np.float32), {"kind": kind, "bucket": KIND_BUCKET[kind],
                                                         "instance": int(instance), "split": split}
