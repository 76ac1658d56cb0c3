"""Colour metrics shared by the training evaluation (tools/train/eval.py) and the demo scorer (tools/demo/score.py).
numpy only, so the demo's checks run without PyTorch."""
import numpy as np


def colourfulness(rgb01):
    """Hasler & Süsstrunk (2003) colourfulness M of an RGB image in 0…1, computed on the 8-bit scale."""
    rgb = rgb01 * 255.0
    rg = rgb[..., 0] - rgb[..., 1]
    yb = 0.5 * (rgb[..., 0] + rgb[..., 1]) - rgb[..., 2]
    return float(np.sqrt(rg.std() ** 2 + yb.std() ** 2) + 0.3 * np.sqrt(rg.mean() ** 2 + yb.mean() ** 2))


# The sepia baseline of the colour issue: one warm tint everywhere.
SEPIA_AB = np.array([5.0, 15.0])


def hue_counts(ab_pred, ab_truth):
    """(agreeing, counted): pixels with original chroma > 10 (counted) whose predicted chroma is > 5 and hue within
    30 degrees of the original's (agreeing). ab arrays (..., 2) in Lab units. Hue agreement = agreeing / counted."""
    c_truth = np.hypot(ab_truth[..., 0], ab_truth[..., 1])
    c_pred = np.hypot(ab_pred[..., 0], ab_pred[..., 1])
    counted = c_truth > 10
    d = np.abs(np.arctan2(ab_pred[..., 1], ab_pred[..., 0]) - np.arctan2(ab_truth[..., 1], ab_truth[..., 0]))
    d = np.minimum(d, 2 * np.pi - d)
    return int((counted & (c_pred > 5) & (d <= np.radians(30))).sum()), int(counted.sum())
