"""Lab conversions of `colorcam bench lab --mode …` against scikit-image (the oracle Zhang et al.'s code trains with).

Needs pip scikit-image (fails with the install hint otherwise).
"""
import numpy as np
import pytest

from conftest import run

try:
    from skimage import color as skcolor
except ImportError:  # pragma: no cover - reported as a failure below
    skcolor = None


def oracle():
    assert skcolor is not None, "scikit-image is required as the Lab oracle: pip install scikit-image"
    return skcolor


def convert(colorcam, tmp_path, mode, values):
    src, dst = tmp_path / f"{mode}.in.f32", tmp_path / f"{mode}.out.f32"
    np.ascontiguousarray(values, dtype=np.float32).tofile(src)
    run(colorcam, "bench", "lab", "--mode", mode, "--input", src, "--output", dst)
    return np.fromfile(dst, dtype=np.float32).reshape(values.shape).astype(np.float64)


def corners_and_random(n):
    """All 8-bit cube corners and edges (every code along each of the 12 edges), then n random colours."""
    codes = np.arange(256) / 255.0
    edges = []
    for axis in range(3):
        for a in (0.0, 1.0):
            for b in (0.0, 1.0):
                e = np.zeros((256, 3))
                e[:, axis] = codes
                e[:, (axis + 1) % 3] = a
                e[:, (axis + 2) % 3] = b
                edges.append(e)
    rng = np.random.default_rng(20261130)
    return np.concatenate(edges + [rng.random((n, 3))])


def test_rgb_to_lab_matches_skimage_on_a_million_colours(colorcam, tmp_path):
    rgb = corners_and_random(1_000_000)
    ours = convert(colorcam, tmp_path, "rgb2lab", rgb)
    ref = oracle().rgb2lab(rgb[None])[0]
    delta_e = np.sqrt(((ours - ref) ** 2).sum(-1))
    assert delta_e.max() <= 0.01, f"max ΔE {delta_e.max():.4g} at RGB {rgb[delta_e.argmax()]}"


def test_lab_to_rgb_matches_skimage(colorcam, tmp_path):
    rng = np.random.default_rng(7)
    lab = np.stack([rng.random(200_000) * 100, rng.random(200_000) * 200 - 100, rng.random(200_000) * 200 - 100], -1)
    # in-gamut colours too: the Lab of random RGB
    lab = np.concatenate([lab, oracle().rgb2lab(rng.random((1, 100_000, 3)))[0]])
    ours = convert(colorcam, tmp_path, "lab2rgb", lab)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = oracle().lab2rgb(lab[None])[0]
    err = np.abs(ours - ref).max()
    assert err <= 1e-4, f"max RGB error {err:.3g}"


def test_eight_bit_round_trip_within_one_level(colorcam, tmp_path):
    # all 2^24 8-bit colours: 8-bit → Lab → 8-bit
    c = np.arange(1 << 24, dtype=np.uint32)
    codes = np.stack([c >> 16, (c >> 8) & 255, c & 255], -1).astype(np.float32)
    back = convert(colorcam, tmp_path, "rgb8-roundtrip", codes)
    diff = np.abs(back - codes).max(-1)
    assert diff.max() <= 1, f"8-bit round trip off by {diff.max()} levels at {codes[diff.argmax()]}"
    # and 8-bit codes → Lab agrees with scikit-image (R, G on a stride of 5, every B)
    v = np.unique(np.concatenate([np.arange(0, 256, 5), [255]]))
    r, g, b = np.meshgrid(v, v, np.arange(256), indexing="ij")
    codes = np.stack([r.ravel(), g.ravel(), b.ravel()], -1).astype(np.float64)
    ours = convert(colorcam, tmp_path, "rgb2lab", codes / 255)
    ref = oracle().rgb2lab((codes / 255)[None])[0]
    assert np.sqrt(((ours - ref) ** 2).sum(-1)).max() <= 0.01


def test_bad_raw_file_is_one_line_exit_65(colorcam, tmp_path):
    bad = tmp_path / "bad.f32"
    bad.write_bytes(b"\x00" * 10)
    proc = run(colorcam, "bench", "lab", "--mode", "rgb2lab", "--input", bad, "--output", tmp_path / "o.f32",
               check=False)
    assert proc.returncode == 65, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "bad.f32" in proc.stderr
