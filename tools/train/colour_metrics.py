"""Colour metrics shared by the training evaluation (tools/train/eval.py) and the demo scorer (tools/demo/score.py).
numpy only, so the demo's checks run without PyTorch."""
import numpy as np


def colourfulness(rgb01):
    """Hasler & Süsstrunk (2003) colourfulness M of an RGB image in 0…1, computed on the 8-bit scale."""
    rgb = rgb01 * 255.0
    rg = rgb[..., 0] - rgb[..., 1]
    yb = 0.5 * (rgb[..., 0] + rgb[..., 1]) - rgb[..., 2]
    return float(np.sqrt(rg.std() ** 2 + yb.std() ** 2) + 0.3 * np.sqrt(rg.mean() ** 2 + yb.mean() ** 2))
