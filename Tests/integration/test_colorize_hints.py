"""`colorcam colorize --whole --hint X,Y,#RRGGBB`: colour hints fed to the default bundle's hint inputs.

The Swift path (hint planes at the model's resolution, the engine's fed inputs, the hint's chroma stamped on the
output where it was given) is held to the reference pipeline (tools/train/pipeline.py with onnxruntime fed the same
planes, the same stamp) within 1 level per channel; a hint moves the colour at
its point to the hint's hue; bad hints are one-line usage errors that write nothing.
"""
import sys

import numpy as np
import pytest

from conftest import ROOT, run
from test_colorize import BUNDLE, need_pil, scene

sys.path.insert(0, str(ROOT / "tools" / "train"))

SIZE = 256
RADIUS = 4  # ColourHint.patchRadiusPx


def hint_planes(hints, h, w):
    """The planes colorcam builds: each hint's ab over a 9x9 patch around its point mapped to 256x256."""
    from labcolor import rgb2lab
    ab = np.zeros((1, 2, SIZE, SIZE), np.float32)
    mask = np.zeros((1, 1, SIZE, SIZE), np.float32)
    for x, y, rgb in hints:
        cx = min(max(int(np.floor((x + 0.5) * SIZE / w - 0.5 + 0.5)), 0), SIZE - 1)
        cy = min(max(int(np.floor((y + 0.5) * SIZE / h - 0.5 + 0.5)), 0), SIZE - 1)
        lab = rgb2lab(np.array(rgb, np.float64).reshape(1, 1, 3) / 255.0)[0, 0]
        ys, xs = slice(max(0, cy - RADIUS), cy + RADIUS + 1), slice(max(0, cx - RADIUS), cx + RADIUS + 1)
        ab[0, 0, ys, xs], ab[0, 1, ys, xs], mask[0, 0, ys, xs] = lab[1], lab[2], 1
    return ab, mask


def stamp(ab, hints, h, w):
    """colorcam's HintPoint.stamp on the model's 256x256 output (scale 1): the hint's ab over its square (half side
    RADIUS + 0.5 px, Chebyshev distance from the pixel centre), blending back to the model's own over as far again
    (smooth step)."""
    from labcolor import rgb2lab
    ab = ab.copy()
    centres = np.arange(SIZE) + 0.5
    inner = RADIUS + 0.5
    for x, y, rgb in hints:
        cx, cy = (x + 0.5) / w * SIZE, (y + 0.5) / h * SIZE
        d = np.maximum(np.abs(centres[None, :] - cx), np.abs(centres[:, None] - cy))
        t = np.clip(1 - (d - inner) / inner, 0, 1)
        weight = (t * t * (3 - 2 * t)).astype(np.float32)[..., None]
        lab = rgb2lab(np.array(rgb, np.float64).reshape(1, 1, 3) / 255.0)[0, 0]
        ab += (np.array(lab[1:], np.float32) - ab) * weight
    return ab


def reference_with_hints(rgb8, hints):
    import onnxruntime as ort
    from pipeline import colorize_rgb8
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(BUNDLE / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    ab, mask = hint_planes(hints, *rgb8.shape[:2])
    return colorize_rgb8(rgb8, lambda L256: stamp(sess.run(None, {"L": L256[None, None].astype(np.float32),
                                                                  "hint_ab": ab, "hint_mask": mask})[0][0]
                                                  .transpose(1, 2, 0), hints, *rgb8.shape[:2]))


def hint_args(hints):
    return [a for x, y, rgb in hints for a in ("--hint", f"{x},{y},#{rgb[0]:02x}{rgb[1]:02x}{rgb[2]:02x}")]


HINTS = [(40, 30, (40, 90, 200)), (200, 150, (200, 60, 40)), (5, 170, (60, 160, 60))]


@pytest.mark.parametrize("h,w", [(180, 240), (256, 256)])
def test_hints_match_the_reference_pipeline_within_one_level(colorcam, tmp_path, h, w):
    Image = need_pil()
    rgb = scene(h, w, seed=3)
    Image.fromarray(rgb).save(tmp_path / "in.png")
    hints = [(x * w // 240, y * h // 180, c) for x, y, c in HINTS]
    run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "out.png", "--model", BUNDLE, "--whole",
        *hint_args(hints))
    got = np.asarray(Image.open(tmp_path / "out.png").convert("RGB")).astype(int)
    want = reference_with_hints(rgb, hints).astype(int)
    diff = np.abs(got - want)
    assert diff.max() <= 1, f"max |colorcam - reference| {diff.max()} at {np.unravel_index(diff.argmax(), diff.shape)}"


def hue_deg(rgb8):
    from labcolor import rgb2lab
    lab = rgb2lab(np.asarray(rgb8, np.float64).reshape(-1, 1, 3) / 255.0)[:, 0]
    return np.degrees(np.arctan2(lab[:, 2], lab[:, 1])), np.hypot(lab[:, 1], lab[:, 2])


def test_a_hint_turns_the_colour_at_its_point_towards_the_hints_hue(colorcam, tmp_path):
    from labcolor import lab2rgb, rgb2lab
    Image = need_pil()
    rgb = scene(180, 240, seed=5)
    Image.fromarray(rgb).save(tmp_path / "in.png")
    run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "none.png", "--model", BUNDLE, "--whole")
    before = np.asarray(Image.open(tmp_path / "none.png").convert("RGB"))
    for x, y, _ in HINTS:
        # The hint: the opposite hue of what the model gives there by itself, chroma 40.
        own = rgb2lab(before[y, x].reshape(1, 1, 3) / 255.0)[0, 0]
        angle = np.arctan2(own[2], own[1]) + np.pi
        colour = tuple(int(v) for v in np.round(np.clip(lab2rgb(np.array([[[60.0, 40 * np.cos(angle),
                                                                              40 * np.sin(angle)]]]))[0, 0], 0, 1) * 255))
        run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "hint.png", "--model", BUNDLE, "--whole",
            *hint_args([(x, y, colour)]))
        out = np.asarray(Image.open(tmp_path / "hint.png").convert("RGB"))
        want_hue, _ = hue_deg([colour])
        got_hue, got_chroma = hue_deg([out[y, x]])
        was_hue, _ = hue_deg([before[y, x]])
        off = abs((got_hue[0] - want_hue[0] + 180) % 360 - 180)
        was_off = abs((was_hue[0] - want_hue[0] + 180) % 360 - 180)
        print(f"hint {colour} at {x},{y}: hue off by {off:.0f} deg (without the hint {was_off:.0f}), "
              f"chroma {got_chroma[0]:.0f}")
        assert was_off > 90, "the hint is a hue the model would not give by itself"
        # Most of the way round to the hint's hue (one 9x9 point; the model weighs it against what it sees).
        assert off <= 60 and got_chroma[0] > 10, (colour, off, got_chroma[0])


@pytest.mark.parametrize("args,says", [
    (["--whole", "--hint", "10,10"], "--hint wants X,Y,#RRGGBB"),
    (["--whole", "--hint", "10,10,#12345"], "--hint wants X,Y,#RRGGBB"),
    (["--whole", "--hint", "240,10,#ff0000"], "lies outside the 240x180 image"),
    (["--whole", "--hint", "-1,10,#ff0000"], "lies outside the 240x180 image"),
    (["--hint", "10,10,#ff0000"], "--hint needs --whole"),
])
def test_a_bad_hint_is_a_one_line_usage_error_and_writes_nothing(colorcam, tmp_path, args, says):
    Image = need_pil()
    Image.fromarray(scene(180, 240)).save(tmp_path / "in.png")
    proc = run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "out.png", "--model", BUNDLE, *args,
               check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 64 and len(lines) == 1 and says in lines[0], (proc.returncode, proc.stderr)
    assert not (tmp_path / "out.png").exists()


def test_hints_to_a_model_without_hint_inputs_are_refused(colorcam, tmp_path):
    Image = need_pil()
    Image.fromarray(scene(64, 64)).save(tmp_path / "in.png")
    # The bare ONNX file read with a preset has no manifest declaring hint inputs.
    proc = run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "out.png", "--model", BUNDLE / "model.onnx",
               "--whole", "--hint", "3,3,#ff0000", check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 64 and len(lines) == 1 and "declares no hint inputs" in lines[0], proc.stderr
    assert not (tmp_path / "out.png").exists()


def test_a_hints_file_remembers_a_pictures_hints_and_finds_it_turned(colorcam, tmp_path):
    Image = need_pil()
    rgb = scene(180, 240, seed=3)
    Image.fromarray(rgb).save(tmp_path / "in.png")
    hints_file = tmp_path / "hints.json"
    x, y, colour = HINTS[0]
    run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "first.png", "--model", BUNDLE, "--whole",
        *hint_args([(x, y, colour)]), "--hints-file", hints_file)
    saved = __import__("json").loads(hints_file.read_text())
    assert [[h["color"] for h in p["hints"]] for p in saved["photos"]] == [["#285ac8"]], saved
    # The same picture turned a quarter (clockwise): the file's hint lands on the same spot of the picture.
    turned = np.rot90(rgb, k=-1).copy()
    Image.fromarray(turned).save(tmp_path / "turned.png")
    proc = run(colorcam, "colorize", tmp_path / "turned.png", tmp_path / "from-file.png", "--model", BUNDLE, "--whole",
               "--hints-file", hints_file)
    assert f"1 hint from {hints_file}" in proc.stderr, proc.stderr
    h = rgb.shape[0]
    run(colorcam, "colorize", tmp_path / "turned.png", tmp_path / "explicit.png", "--model", BUNDLE, "--whole",
        *hint_args([(h - 1 - y, x, colour)]))
    got = np.asarray(Image.open(tmp_path / "from-file.png").convert("RGB")).astype(int)
    want = np.asarray(Image.open(tmp_path / "explicit.png").convert("RGB")).astype(int)
    assert np.abs(got - want).max() <= 1, np.abs(got - want).max()
    # Another picture gets nothing from the file.
    Image.fromarray(scene(180, 240, seed=11)).save(tmp_path / "other.png")
    proc = run(colorcam, "colorize", tmp_path / "other.png", tmp_path / "other-out.png", "--model", BUNDLE,
               "--whole", "--hints-file", hints_file)
    assert "from" not in proc.stderr, proc.stderr


def test_a_one_character_hints_file_in_the_working_folder_is_written(colorcam, tmp_path):
    """`--hints-file h`: Foundation's deletingLastPathComponent trapped on a one-character relative path."""
    Image = need_pil()
    Image.fromarray(scene(60, 80, seed=1)).save(tmp_path / "in.png")
    x, y, colour = HINTS[0]
    run(colorcam, "colorize", "in.png", "out.png", "--model", BUNDLE, "--whole",
        *hint_args([(x * 80 // 240, y * 60 // 180, colour)]), "--hints-file", "h", cwd=tmp_path)
    saved = __import__("json").loads((tmp_path / "h").read_text())
    assert [[h["color"] for h in p["hints"]] for p in saved["photos"]] == [["#285ac8"]], saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h", "in.png", "out.png"]


@pytest.mark.parametrize("setup,args,code,says", [
    (None, ["--hints-file", "{dir}/h.json"], 64, "--hints-file needs --whole"),
    ("{", ["--whole", "--hints-file", "{dir}/h.json"], 65, "h.json: not JSON"),
    (None, ["--whole", "--hints-file", "{dir}/no/such/dir/h.json"], 66, "does not exist"),
])
def test_a_bad_hints_file_is_one_line(colorcam, tmp_path, setup, args, code, says):
    Image = need_pil()
    Image.fromarray(scene(60, 80, seed=1)).save(tmp_path / "in.png")
    if setup is not None:
        (tmp_path / "h.json").write_text(setup)
    args = [a.replace("{dir}", str(tmp_path)) for a in args]
    proc = run(colorcam, "colorize", tmp_path / "in.png", tmp_path / "out.png", "--model", BUNDLE, *args, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and len(lines) == 1 and says in lines[0], proc.stderr
    assert not (tmp_path / "out.png").exists()
