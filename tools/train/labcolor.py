"""sRGB (D65) <-> CIE Lab in numpy and torch, with the constants of skimage.color.rgb2lab / lab2rgb.

Shared by the dataset builder, training, evaluation and export so every stage uses one definition.
"""
import numpy as np

# sRGB -> XYZ (D65), the matrix skimage uses
M_RGB2XYZ = np.array([[0.412453, 0.357580, 0.180423],
                      [0.212671, 0.715160, 0.072169],
                      [0.019334, 0.119193, 0.950227]])
M_XYZ2RGB = np.linalg.inv(M_RGB2XYZ)
WHITE_D65 = np.array([0.95047, 1.0, 1.08883])


def rgb2lab(rgb):
    """rgb: float array (..., 3) in [0, 1] -> Lab (..., 3), L in [0, 100]."""
    rgb = np.asarray(rgb, dtype=np.float64)
    lin = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz = lin @ M_RGB2XYZ.T / WHITE_D65
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    L = 116.0 * f[..., 1] - 16.0
    a = 500.0 * (f[..., 0] - f[..., 1])
    b = 200.0 * (f[..., 1] - f[..., 2])
    return np.stack([L, a, b], axis=-1)


def lab2linear(lab):
    """Lab (..., 3) -> linear sRGB, not clipped: a colour outside the gamut has a channel outside [0, 1]."""
    lab = np.asarray(lab, dtype=np.float64)
    fy = (lab[..., 0] + 16.0) / 116.0
    fx = fy + lab[..., 1] / 500.0
    fz = np.maximum(fy - lab[..., 2] / 200.0, 0.0)
    f = np.stack([fx, fy, fz], axis=-1)
    xyz = np.where(f > 0.2068966, f ** 3, (f - 16.0 / 116.0) / 7.787) * WHITE_D65
    return xyz @ M_XYZ2RGB.T


def lab2rgb(lab):
    """Lab (..., 3) -> sRGB in [0, 1], clipped (as skimage does)."""
    lin = lab2linear(lab)
    rgb = np.where(lin > 0.0031308, 1.055 * np.power(np.maximum(lin, 0), 1 / 2.4) - 0.055, 12.92 * lin)
    return np.clip(rgb, 0.0, 1.0)


def torch_lab2rgb(lab):
    """lab: (N, 3, H, W) tensor -> sRGB (N, 3, H, W) in [0, 1]."""
    import torch  # only training needs torch; the numpy functions are used by tests and the demo without it
    m = torch.tensor(M_XYZ2RGB, dtype=lab.dtype)
    w = torch.tensor(WHITE_D65, dtype=lab.dtype).view(1, 3, 1, 1)
    fy = (lab[:, 0:1] + 16.0) / 116.0
    fx = fy + lab[:, 1:2] / 500.0
    fz = torch.clamp(fy - lab[:, 2:3] / 200.0, min=0.0)
    f = torch.cat([fx, fy, fz], 1)
    xyz = torch.where(f > 0.2068966, f ** 3, (f - 16.0 / 116.0) / 7.787) * w
    lin = torch.einsum("ij,njhw->nihw", m, xyz)
    rgb = torch.where(lin > 0.0031308, 1.055 * torch.clamp(lin, min=1e-8) ** (1 / 2.4) - 0.055, 12.92 * lin)
    return rgb.clamp(0, 1)
