"""`colorcam colorize`: parity with the numpy/onnxruntime pipeline (tools/train/pipeline.py) and bad input.

The exported model was checked against PyTorch by tools/train/export.py (max |ab| difference in the manifest);
here the Swift path (Lab in, engine, Lab out) is held to the reference pipeline within 1 level per channel.
Needs pip onnxruntime, numpy and Pillow (fails with the install hint otherwise).
"""
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, run

sys.path.insert(0, str(ROOT / "tools" / "train"))
BUNDLE = ROOT / "Models" / "colorcam-default"

try:
    from PIL import Image
except ImportError:  # pragma: no cover
    Image = None


def need_pil():
    assert Image is not None, "Pillow is required to make test images: pip install pillow"
    return Image


def reference(rgb8):
    try:
        from pipeline import colorize_rgb8, onnx_runner
    except ImportError as e:
        pytest.fail(f"the reference pipeline needs numpy and onnxruntime ({e}): pip install numpy onnxruntime")
    return colorize_rgb8(rgb8, onnx_runner(str(BUNDLE / "model.onnx")))


def scene(h, w, seed=1):
    """A synthetic photo-like image: gradients, discs and noise (colour is irrelevant: only L is used)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w] / max(h, w)
    img = np.stack([0.5 + 0.5 * np.sin(6 * x + 1), 0.3 + 0.6 * y, 0.5 + 0.4 * np.cos(9 * x * y)], -1)
    for _ in range(6):
        cy, cx, r = rng.random() * h, rng.random() * w, (0.05 + 0.2 * rng.random()) * min(h, w)
        mask = (np.mgrid[0:h, 0:w][0] - cy) ** 2 + (np.mgrid[0:h, 0:w][1] - cx) ** 2 < r * r
        img[mask] = rng.random(3)
    img += rng.normal(0, 0.03, img.shape)
    return (np.clip(img, 0, 1) * 255).round().astype(np.uint8)


def colorize(colorcam, src, dst, *extra, check=True):
    return run(colorcam, "colorize", src, dst, "--model", BUNDLE, *extra, check=check)


def test_bundle_manifest_describes_the_model():
    m = json.loads((BUNDLE / "manifest.json").read_text())
    assert m["input"]["shape"] == [1, 1, 256, 256] and m["output"]["shape"] == [1, 2, 256, 256]
    assert m["opset"] == 17 and m["head"] in ("regression", "classification", "mixed")
    assert (BUNDLE / m["file"]).stat().st_size <= 10 * 1024 * 1024
    assert m["export_check"]["onnxruntime_vs_torch_max_abs_ab"] < 1e-3
    assert {s["package"] for s in m["data_sources"]} >= {"mate-backgrounds", "gcompris-qt-data"}


@pytest.mark.parametrize("h,w,ext", [(300, 517, "png"), (37, 64, "png"), (1024, 700, "jpg"), (256, 256, "png")])
def test_matches_reference_pipeline_within_one_level(colorcam, tmp_path, h, w, ext):
    rgb = scene(h, w)
    src = tmp_path / f"in.{ext}"
    need_pil().fromarray(rgb).save(src, **({"quality": 95} if ext == "jpg" else {}))
    decoded = np.asarray(Image.open(src).convert("RGB"))
    out = tmp_path / "out.png"
    colorize(colorcam, src, out, "--whole")
    ours = np.asarray(Image.open(out).convert("RGB")).astype(int)
    ref = reference(decoded).astype(int)
    assert ours.shape == ref.shape
    diff = np.abs(ours - ref)
    assert diff.max() <= 1, f"{diff.max()} levels off at {np.unravel_index(diff.argmax(), diff.shape)}"
    # the output keeps the input's lightness: L of output vs input within about one 8-bit step
    from labcolor import rgb2lab
    dl = np.abs(rgb2lab(ours / 255.0)[..., 0] - rgb2lab(decoded / 255.0)[..., 0])
    assert np.percentile(dl, 99) < 1.0


def test_grey_png_and_jpeg_output(colorcam, tmp_path):
    grey = need_pil().fromarray(scene(120, 160)).convert("L")
    src = tmp_path / "grey.png"
    grey.save(src)
    out = tmp_path / "out.jpg"
    colorize(colorcam, src, out)
    im = Image.open(out)
    assert im.format == "JPEG" and im.mode == "RGB" and im.size == (160, 120)


def test_one_by_one_pixel_is_handled(colorcam, tmp_path):
    src = tmp_path / "one.png"
    need_pil().new("RGB", (1, 1), (90, 90, 90)).save(src)
    out = tmp_path / "one_out.png"
    colorize(colorcam, src, out)
    assert Image.open(out).size == (1, 1)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def zero_by_zero_png():
    ihdr = struct.pack(">IIBBBBB", 0, 0, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", zlib.compress(b"")) + png_chunk(b"IEND", b"")


BAD = {
    "garbage.png": lambda p: p.write_bytes(b"this is not an image at all"),
    "empty.jpg": lambda p: p.write_bytes(b""),
    "zero.png": lambda p: p.write_bytes(zero_by_zero_png()),
    "deep.png": lambda p: need_pil().fromarray((np.arange(64 * 48, dtype=np.uint16).reshape(48, 64) * 20)).save(p),
    "cmyk.jpg": lambda p: need_pil().new("CMYK", (32, 24), (10, 20, 30, 40)).save(p),
    "truncated.jpg": lambda p: (need_pil().fromarray(scene(64, 64)).save(p, quality=90),
                                p.write_bytes(p.read_bytes()[:300])),
    "truncated.png": lambda p: (need_pil().fromarray(scene(64, 64)).save(p), p.write_bytes(p.read_bytes()[:200])),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_exit_65(colorcam, tmp_path, name):
    src = tmp_path / name
    BAD[name](src)
    out = tmp_path / "out.png"
    proc = colorize(colorcam, src, out, "--whole", check=False)
    assert proc.returncode == 65, f"exit {proc.returncode}: {proc.stderr}"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0], proc.stderr
    assert not out.exists()


def test_missing_input_and_bad_output_name(colorcam, tmp_path):
    proc = colorize(colorcam, tmp_path / "nope.png", tmp_path / "o.png", check=False)
    assert proc.returncode == 66 and "nope.png" in proc.stderr
    src = tmp_path / "in.png"
    need_pil().fromarray(scene(20, 20)).save(src)
    proc = colorize(colorcam, src, tmp_path / "o.bmp", check=False)
    assert proc.returncode == 64 and "o.bmp" in proc.stderr


def test_bare_onnx_with_preset_equals_bundle(colorcam, tmp_path):
    src = tmp_path / "in.png"
    need_pil().fromarray(scene(90, 130)).save(src)
    run(colorcam, "colorize", src, tmp_path / "a.png", "--model", BUNDLE)
    run(colorcam, "colorize", src, tmp_path / "b.png", "--model", BUNDLE / "model.onnx", "--preset", "colorcam")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    proc = run(colorcam, "colorize", src, tmp_path / "c.png", "--model", BUNDLE, "--preset", "eccv16", check=False)
    assert proc.returncode == 64


@pytest.mark.parametrize("manifest,code", [(None, 66), ("not json", 65), ('{"file": "model.onnx"}', 65),
                                           ('{"file": "../x.onnx", "input": {"shape": [1,1,256,256]}, "output": {}}', 65),
                                           ('{"file": "model.onnx", "input": {"shape": [1,3,256,256]}, "output": {}}', 65)])
def test_broken_bundle_is_one_line_error(colorcam, tmp_path, manifest, code):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "model.onnx").write_bytes((BUNDLE / "model.onnx").read_bytes())
    if manifest is not None:
        (bundle / "manifest.json").write_text(manifest)
    src = tmp_path / "in.png"
    need_pil().fromarray(scene(20, 20)).save(src)
    proc = run(colorcam, "colorize", src, tmp_path / "o.png", "--model", bundle, check=False)
    assert proc.returncode == code, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "bundle" in proc.stderr


def test_model_that_is_not_onnx_is_exit_65(colorcam, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    src = tmp_path / "in.png"
    need_pil().fromarray(scene(20, 20)).save(src)
    proc = run(colorcam, "colorize", src, tmp_path / "o.png", "--model", bad, check=False)
    assert proc.returncode == 65 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("target", ["directory", "bundle"])
def test_bench_infer_on_a_directory_is_one_line_exit_65(colorcam, tmp_path, target):
    """`bench infer` takes MODEL.onnx: a directory given instead (a bundle, or any) is one line and exit 65. On ext4 a
    directory's end offset can be Int.max: the reader that sized files by seeking aborted on the bundle."""
    path = BUNDLE
    if target == "directory":
        path = tmp_path / "folder"
        path.mkdir()
    proc = run(colorcam, "bench", "infer", path, "--runs", "1", check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 65 and len(lines) == 1, proc.stderr
    assert str(path) in lines[0] and "is a directory" in lines[0], proc.stderr


def test_bench_infer_reads_a_model_from_a_pipe(colorcam, tmp_path):
    """A model read from a pipe (`<(…)`, not seekable) is read to its end and runs."""
    proc = subprocess.run(["bash", "-c", f'"{colorcam}" bench infer <(cat "{BUNDLE / "model.onnx"}") --runs 1'],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "latency" in proc.stdout, proc.stderr


def test_without_whole_only_the_photo_is_colorized_and_the_rest_kept_exactly(colorcam, tmp_path):
    """A black-and-white print (a held-out demo photo) lying on a plain textured table."""
    rng = np.random.default_rng(5)
    table = np.clip(70 + rng.normal(0, 6, (360, 480, 1)) + np.array([12, 4, -6]), 0, 255).astype(np.uint8)
    photo = Image.open(ROOT / "Assets/demo-photos/green-maple.png").convert("L").resize((260, 160))
    grey = np.repeat(np.asarray(photo)[..., None], 3, axis=2)
    img = table.copy()
    img[90:250, 110:370] = grey
    src, out = tmp_path / "table.png", tmp_path / "out.png"
    Image.fromarray(img).save(src)
    proc = colorize(colorcam, src, out)
    assert "1 photo found" in proc.stderr, proc.stderr
    res = np.asarray(Image.open(out).convert("RGB")).astype(int)
    outside = np.ones(img.shape[:2], bool)
    outside[84:256, 104:376] = False                     # the print and a 6 px margin
    assert (res[outside] == img[outside]).all(), "pixels outside the photo changed"
    inside = res[100:240, 120:360]
    chroma = np.abs(inside - inside.mean(axis=2, keepdims=True)).mean()
    assert chroma > 2, f"the photo stayed grey (mean |channel - grey| {chroma:.2f})"
    # An image with no photo in it is written unchanged and says so.
    plain = tmp_path / "plain.png"
    Image.fromarray(table.repeat(1, axis=0)).save(plain)
    proc = colorize(colorcam, plain, tmp_path / "plain-out.png")
    assert "no photo found" in proc.stderr
    assert (np.asarray(Image.open(tmp_path / "plain-out.png")) == table).all()
