"""The colorize pipeline in numpy: the reference the Swift `colorcam colorize` is held to (test_colorize.py).

    L (full resolution, from the 8-bit sRGB image)
      -> box-average by k = floor(min(H, W) / 256) when k >= 2 (blocks of k x k; the last partial row/column
         blocks average the pixels they have)
      -> bilinear (half-pixel centres, edge clamp) to 256 x 256
      -> model -> ab 256 x 256
      -> bilinear (half-pixel centres, edge clamp) to H x W
      -> Lab (image's own L, predicted ab) -> sRGB, clipped, rounded to 8 bits
"""
import numpy as np

from labcolor import lab2rgb, rgb2lab

SIZE = 256


def box_reduce(img, k):
    """img (H, W[, C]) -> block means of k x k, ceil(H/k) x ceil(W/k)."""
    h, w = img.shape[:2]
    hh, ww = -(-h // k), -(-w // k)
    out = np.zeros((hh, ww) + img.shape[2:], dtype=np.float64)
    cnt = np.zeros((hh, ww), dtype=np.float64)
    for dy in range(k):
        for dx in range(k):
            part = img[dy::k, dx::k]
            out[:part.shape[0], :part.shape[1]] += part
            cnt[:part.shape[0], :part.shape[1]] += 1
    return out / cnt.reshape(cnt.shape + (1,) * (img.ndim - 2))


def bilinear(img, out_h, out_w):
    """Half-pixel-centre bilinear resize with edge clamping (what ONNX Resize linear / half_pixel does)."""
    h, w = img.shape[:2]
    ys = np.clip((np.arange(out_h) + 0.5) * h / out_h - 0.5, 0, h - 1)
    xs = np.clip((np.arange(out_w) + 0.5) * w / out_w - 0.5, 0, w - 1)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = ys - y0, xs - x0
    if img.ndim == 3:
        fy, fx = fy[:, None, None], fx[None, :, None]
    else:
        fy, fx = fy[:, None], fx[None, :]
    top = img[y0][:, x0] * (1 - fx) + img[y0][:, x1] * fx
    bot = img[y1][:, x0] * (1 - fx) + img[y1][:, x1] * fx
    return top * (1 - fy) + bot * fy


def model_input(L):
    """Full-resolution L (H, W) -> the model's 256 x 256 L."""
    k = min(L.shape) // SIZE
    if k >= 2:
        L = box_reduce(L, k)
    return bilinear(L, SIZE, SIZE)


def combine(L, ab256):
    """Full-resolution L (H, W) and ab (256, 256, 2) -> Lab (H, W, 3)."""
    ab = bilinear(ab256, L.shape[0], L.shape[1])
    return np.concatenate([L[..., None], ab], -1)


def colorize_rgb8(rgb8, run_model):
    """rgb8 (H, W, 3) uint8 -> colorized uint8; run_model maps L (256, 256) float32 -> ab (256, 256, 2)."""
    L = rgb2lab(rgb8.astype(np.float64) / 255.0)[..., 0]
    ab = run_model(model_input(L).astype(np.float32))
    return np.round(lab2rgb(combine(L, ab.astype(np.float64))) * 255).astype(np.uint8)


def onnx_runner(path):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])

    def run(L256):
        return sess.run(None, {"L": L256[None, None]})[0][0].transpose(1, 2, 0)
    return run
