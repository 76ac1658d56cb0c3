"""Minimal YUV4MPEG2 reader for the demo checkers: 8-bit 4:2:0 (C420jpeg / C420 / C420mpeg2 / C420paldv), frame
parameters ignored. And the BT.601 full-range ("JPEG") Y'CbCr → R'G'B' decode that colorcam uses
(Sources/Stream/RGBToYCbCr.swift encodes with its inverse; Sources/Stream/PNGImageWriter.swift decodes with it),
with nearest (replicated) chroma upsampling.
"""
import numpy as np


class Y4MError(Exception):
    """Bad input: the message names the file and byte offset."""


class Y4MReader:
    """Iterates (Y, Cb, Cr) uint8 planes; Y is H×W, chroma ⌈H/2⌉×⌈W/2⌉. Use as a context manager or close().
    After each frame, `timestamp_us` is its `Xts_us` FRAME parameter (colorcam's source time), or None."""

    def __init__(self, path):
        self.path = path
        self.handle = open(path, "rb")
        line = self.handle.readline(4096)
        if not line.startswith(b"YUV4MPEG2 ") or not line.endswith(b"\n"):
            raise Y4MError(f"{path}: offset 0: not a YUV4MPEG2 stream header")
        params = {}
        for token in line[10:].split():
            params[chr(token[0])] = token[1:].decode("ascii", "replace")
        try:
            self.width, self.height = int(params["W"]), int(params["H"])
        except (KeyError, ValueError):
            raise Y4MError(f"{path}: offset 0: header lacks W/H: {line.strip()!r}") from None
        colour = params.get("C", "420jpeg")
        if not colour.startswith("420"):
            raise Y4MError(f"{path}: offset 0: colour space C{colour} is not 8-bit 4:2:0")
        self.colour = colour
        self.fps = params.get("F", "")
        self.chroma_w, self.chroma_h = (self.width + 1) // 2, (self.height + 1) // 2
        self.luma_bytes = self.width * self.height
        self.chroma_bytes = self.chroma_w * self.chroma_h
        self.timestamp_us = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.handle.close()

    def __iter__(self):
        return self

    def __next__(self):
        offset = self.handle.tell()
        marker = self.handle.readline(4096)
        if not marker:
            raise StopIteration
        if not marker.startswith(b"FRAME") or not marker.endswith(b"\n"):
            raise Y4MError(f"{self.path}: offset {offset}: expected a FRAME line, found {marker[:16]!r}")
        self.timestamp_us = None
        for token in marker[5:].split():
            if token.startswith(b"Xts_us="):
                try:
                    self.timestamp_us = int(token[7:])
                except ValueError:
                    raise Y4MError(f"{self.path}: offset {offset}: Xts_us is not an integer: {token!r}") from None
        size = self.luma_bytes + 2 * self.chroma_bytes
        data = self.handle.read(size)
        if len(data) != size:
            raise Y4MError(f"{self.path}: offset {offset}: truncated frame ({len(data)} of {size} bytes)")
        y = np.frombuffer(data, np.uint8, self.luma_bytes).reshape(self.height, self.width)
        cb = np.frombuffer(data, np.uint8, self.chroma_bytes, self.luma_bytes).reshape(self.chroma_h, self.chroma_w)
        cr = np.frombuffer(data, np.uint8, self.chroma_bytes, self.luma_bytes + self.chroma_bytes) \
            .reshape(self.chroma_h, self.chroma_w)
        return y, cb, cr


def upsample_nearest(plane, height, width):
    """Chroma plane → full size by replicating each sample over its 2×2 luma block."""
    return np.repeat(np.repeat(plane, 2, axis=0), 2, axis=1)[:height, :width]


def ycbcr_to_rgb(y, cb, cr, rows=None, cols=None):
    """BT.601 full range, chroma nearest-upsampled; float64 R'G'B' in 0..255 (clipped, not rounded).
    Whole frame (H×W×3), or only the pixels (rows[i], cols[i]) (N×3) when rows and cols are given."""
    if rows is None:
        h, w = y.shape
        return samples_to_rgb(y, upsample_nearest(cb, h, w), upsample_nearest(cr, h, w))
    return samples_to_rgb(y[rows, cols], cb[rows // 2, cols // 2], cr[rows // 2, cols // 2])


def samples_to_rgb(y, cb, cr):
    """BT.601 full range decode of same-shaped Y, Cb, Cr arrays; float64 R'G'B' (..., 3) in 0..255 (clipped)."""
    luma = np.asarray(y, np.float64)
    u = np.asarray(cb, np.float64) - 128
    v = np.asarray(cr, np.float64) - 128
    rgb = np.stack([luma + 1.402 * v, luma - 0.344136 * u - 0.714136 * v, luma + 1.772 * u], axis=-1)
    return np.clip(rgb, 0, 255)
