"""`colorcam personalize` (issue #27): a short run on a generated themed set where personalization must measurably
help, the bundle it writes (used by `colorize --model`, loaded by onnxruntime with the same output), and the bad
inputs: one-line errors naming the file, the conventional exit codes, nothing half-written."""
import json
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnxruntime as ort
from PIL import Image

from conftest import ROOT, run

# The theme: every photo is a violet-blue (a, b) = (22, -48) — a colour the base model never guesses for a random
# texture — over its own lightness pattern.
THEME_AB = (22.0, -48.0)


def lab_to_srgb8(L, a, b):
    """CIE Lab (D65) to 8-bit sRGB (clipped), numpy only."""
    fy = (L + 16) / 116
    fx, fz = fy + a / 500, fy - b / 200

    def finv(t):
        return np.where(t > 6 / 29, t ** 3, 3 * (6 / 29) ** 2 * (t - 4 / 29))
    X, Y, Z = 0.95047 * finv(fx), finv(fy), 1.08883 * finv(fz)
    rgb = np.stack([3.2404542 * X - 1.5371385 * Y - 0.4985314 * Z,
                    -0.9692660 * X + 1.8760108 * Y + 0.0415560 * Z,
                    0.0556434 * X - 0.2040259 * Y + 1.0572252 * Z], -1)
    rgb = np.clip(rgb, 0, 1)
    rgb = np.where(rgb <= 0.0031308, 12.92 * rgb, 1.055 * rgb ** (1 / 2.4) - 0.055)
    return np.round(rgb * 255).astype(np.uint8)


def themed_photo(seed, size=192):
    """A smooth random lightness field (blobs and bands) coloured with the theme's ab (a little varied)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    L = np.full((size, size), 55.0)
    for _ in range(6):
        cx, cy, r, amp = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.1, 0.4), rng.uniform(-25, 25)
        L += amp * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))
    L += 8 * np.sin(2 * np.pi * (x * rng.uniform(1, 4) + y * rng.uniform(1, 4)))
    L = np.clip(L, 25, 85)
    a = THEME_AB[0] + rng.normal(0, 3, L.shape)
    b = THEME_AB[1] + rng.normal(0, 3, L.shape)
    return lab_to_srgb8(L, a, b)


def ab_planes(rgb):
    """a, b planes (CIE Lab, D65) of 8-bit sRGB pixels (any float array, 0..255), numpy only."""
    c = rgb / 255.0
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    X = (0.4124564 * c[..., 0] + 0.3575761 * c[..., 1] + 0.1804375 * c[..., 2]) / 0.95047
    Y = 0.2126729 * c[..., 0] + 0.7151522 * c[..., 1] + 0.0721750 * c[..., 2]
    Z = (0.0193339 * c[..., 0] + 0.1191920 * c[..., 1] + 0.9503041 * c[..., 2]) / 1.08883

    def f(t):
        return np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))


def hue_agreement(rgb_pred, rgb_truth):
    """Share of pixels (original chroma > 10) whose predicted chroma > 5 and hue within 30 degrees."""
    pa, pb = ab_planes(rgb_pred.astype(np.float64))
    ta, tb = ab_planes(rgb_truth.astype(np.float64))
    counted = np.hypot(ta, tb) > 10
    d = np.abs(np.arctan2(pb, pa) - np.arctan2(tb, ta))
    d = np.minimum(d, 2 * np.pi - d)
    ok = counted & (np.hypot(pa, pb) > 5) & (d <= np.radians(30))
    return ok.sum() / max(1, counted.sum())


def write_theme(folder, seeds):
    os.makedirs(folder, exist_ok=True)
    for s in seeds:
        Image.fromarray(themed_photo(s)).save(os.path.join(folder, f"photo-{s:02d}.png"))


def leftovers(parent, name):
    return [f for f in os.listdir(parent) if f.startswith(name) and f != name]


def test_personalize_learns_a_theme_and_writes_a_bundle_every_reader_loads(colorcam, tmp_path):
    photos = tmp_path / "family"
    write_theme(photos / "album", range(10))  # recursive: photos in a subfolder
    out = tmp_path / "mine"
    proc = run(colorcam, "personalize", "--photos", photos, "--out", out, "--minutes", "0.5", "--seed", "3",
               "--rehearse", "none")
    assert "wrote" in proc.stdout, proc.stdout + proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    p = manifest["personalized"]
    before, after = p["heldout_before"], p["heldout_after"]
    print(f"held-out (personalize's own split): ab L1 {before['ab_l1']} -> {after['ab_l1']}, "
          f"hue {before['hue_agreement']} -> {after['hue_agreement']}")
    assert p["photos"]["count"] == 10 and len(p["photos"]["heldout"]) == 2
    assert after["ab_l1"] <= 0.85 * before["ab_l1"]
    assert after["hue_agreement"] >= before["hue_agreement"] + 0.10
    assert p["steps"] > 0 and p["base"]["model_sha256"] and all(f["sha256"] for f in p["photos"]["train"])
    assert leftovers(tmp_path, "mine") == []

    # A photo of the theme it never saw, colorized whole by the base model and by the personalized bundle.
    fresh = themed_photo(99)
    grey = np.repeat(np.asarray(Image.fromarray(fresh).convert("L"))[..., None], 3, -1)
    Image.fromarray(grey).save(tmp_path / "fresh-grey.png")
    run(colorcam, "colorize", tmp_path / "fresh-grey.png", tmp_path / "base.png", "--whole")
    run(colorcam, "colorize", tmp_path / "fresh-grey.png", tmp_path / "personal.png", "--whole", "--model", out)
    base_hue = hue_agreement(np.asarray(Image.open(tmp_path / "base.png")), fresh)
    mine_hue = hue_agreement(np.asarray(Image.open(tmp_path / "personal.png")), fresh)
    print(f"unseen themed photo, colorize --whole: hue agreement base {base_hue:.3f}, personalized {mine_hue:.3f}")
    assert mine_hue >= base_hue + 0.10

    # The bundle's model.onnx: an ordinary inference graph; colorcam and onnxruntime agree on it.
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 100, (1, 1, 256, 256)).astype(np.float32)
    x.astype("<f4").tofile(tmp_path / "in.f32")
    run(colorcam, "bench", "infer", out / "model.onnx", "--input", tmp_path / "in.f32", "--output",
        tmp_path / "out.f32")
    ours = np.fromfile(tmp_path / "out.f32", dtype="<f4")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(str(out / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    theirs = session.run(None, {"L": x})[0].ravel()
    err = np.abs(ours - theirs).max()
    print(f"personalized model.onnx: colorcam vs onnxruntime max |diff| {err:.2e}")
    assert err <= 1e-4 * max(1.0, float(np.abs(theirs).max()))

    # Run again onto the same --out: the personalized bundle there is replaced, atomically.
    run(colorcam, "personalize", "--photos", photos, "--out", out, "--minutes", "0.2")
    assert json.loads((out / "manifest.json").read_text())["personalized"]["seed"] == 1
    assert leftovers(tmp_path, "mine") == []


def test_personalize_bad_inputs_name_the_file_and_write_nothing(colorcam, tmp_path):
    def fails(code, *args):
        proc = run(colorcam, "personalize", *args, check=False)
        assert proc.returncode == code, (args, proc.returncode, proc.stderr)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        assert len(lines) == 1, proc.stderr
        return lines[0]

    out = tmp_path / "bundle"
    line = fails(66, "--photos", tmp_path / "nowhere", "--out", out)
    assert "nowhere" in line
    few = tmp_path / "few"
    write_theme(few, range(3))
    line = fails(65, "--photos", few, "--out", out)
    assert str(few) in line and "at least 5" in line
    grey = tmp_path / "grey"
    write_theme(grey, range(5))
    Image.fromarray(np.full((64, 64, 3), 128, np.uint8)).save(grey / "scan.png")
    line = fails(65, "--photos", grey, "--out", out)
    assert "scan.png" in line and "black-and-white" in line
    broken = tmp_path / "broken"
    write_theme(broken, range(5))
    (broken / "cut.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    line = fails(65, "--photos", broken, "--out", out)
    assert "cut.jpg" in line
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    line = fails(64, "--photos", broken, "--out", taken)
    assert "not a bundle personalize wrote" in line
    assert (taken / "notes.txt").read_text() == "mine"
    good = tmp_path / "good"
    write_theme(good, range(5))
    line = fails(66, "--photos", good, "--out", out, "--rehearse", tmp_path / "no-rehearsal")
    assert "no-rehearsal" in line and "no such folder" in line
    (tmp_path / "empty").mkdir()
    line = fails(65, "--photos", good, "--out", out, "--rehearse", tmp_path / "empty")
    assert "rehearsal needs at least 2" in line
    fails(64, "--photos", broken)
    fails(64, "--photos", broken, "--out", out, "--train", "sideways")
    assert not out.exists() and leftovers(tmp_path, "bundle") == []
    # A one-character --out relative to the working folder (Foundation's deletingLastPathComponent trapped on it).
    proc = run(colorcam, "personalize", "--photos", few, "--out", "b", check=False, cwd=tmp_path)
    assert proc.returncode == 65 and "at least 5" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, (
        proc.returncode, proc.stderr)
    assert not (tmp_path / "b").exists()


def test_sigint_keeps_the_best_weights_so_far(colorcam, tmp_path):
    import signal
    import subprocess
    photos = tmp_path / "family"
    write_theme(photos, range(6))
    out = tmp_path / "early"
    proc = subprocess.Popen([colorcam, "personalize", "--photos", str(photos), "--out", str(out), "--minutes", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:  # not a terminal: one line per evaluation
        if line.startswith("personalize: step"):
            break
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "stopped early" in stdout
    p = json.loads((out / "manifest.json").read_text())["personalized"]
    assert p["stopped_early"] is True and p["seconds"] < 100
    assert leftovers(tmp_path, "early") == []


def ab_of(path):
    """a, b planes (CIE Lab, D65) of an 8-bit sRGB image file."""
    return ab_planes(np.asarray(Image.open(path).convert("RGB")).astype(np.float64))


def test_rehearsal_keeps_the_colours_of_other_photos(colorcam, tmp_path):
    """A folder of one colour teaches the model that colour; with rehearsal (the default bundle's general photos,
    their base colours as the target, a guard against worse weights) the bundle still colours other photos as the
    base model did, where the same run without rehearsal repaints them."""
    photos = tmp_path / "violet"
    write_theme(photos, range(10))
    bundles = {name: tmp_path / name for name in ("alone", "rehearsed")}
    extras = {"alone": ["--rehearse", "none"], "rehearsed": []}
    # The two runs side by side: personalize trains on one core, and each run has its own (on the 2-core build
    # machine the rehearsed run made 11 steps beside the other against 13 alone; the test's margins are wide).
    with ThreadPoolExecutor(2) as pool:
        for job in [pool.submit(run, colorcam, "personalize", "--photos", photos, "--out", bundles[name], "--minutes",
                                "0.6", "--seed", "3", *extras[name]) for name in bundles]:
            job.result()
    p = json.loads((bundles["rehearsed"] / "manifest.json").read_text())["personalized"]
    r = p["rehearsal"]
    assert r["folder"].endswith("colorcam-default/rehearsal") and r["rehearsed_photos"] == 48
    assert len(r["guard_photos"]) == 16
    gb, ga = r["guard_before"], r["guard_after"]
    merit = (gb["ab_l1"] - ga["ab_l1"]) / gb["ab_l1"] + (ga["hue_agreement"] - gb["hue_agreement"])
    print(f"guard photos: ab L1 {gb['ab_l1']} -> {ga['ab_l1']}, hue {gb['hue_agreement']} -> {ga['hue_agreement']}")
    assert merit >= -r["general_tolerance"] - 1e-3
    assert json.loads((bundles["alone"] / "manifest.json").read_text())["personalized"]["rehearsal"] is None

    # Other photos (the demo's three, committed in Assets/ and never rehearsed), colorized whole: how far each
    # bundle moves their colours.
    drift = {"alone": [], "rehearsed": []}
    for k in ("fallen-leaf", "green-maple", "schwerin-palace"):
        grey = tmp_path / f"demo-{k}-grey.png"
        Image.open(ROOT / "Assets" / "demo-photos" / f"{k}.png").convert("L").convert("RGB").save(grey)
        run(colorcam, "colorize", grey, tmp_path / f"demo-{k}-base.png", "--whole")
        a0, b0 = ab_of(tmp_path / f"demo-{k}-base.png")
        for name, bundle in bundles.items():
            out = tmp_path / f"demo-{k}-{name}.png"
            run(colorcam, "colorize", grey, out, "--whole", "--model", bundle)
            a1, b1 = ab_of(out)
            drift[name].append(float(np.mean(np.hypot(a1 - a0, b1 - b0))))
    print(f"demo photos, mean ab change from the base: alone {drift['alone']}, rehearsed {drift['rehearsed']}")
    assert np.mean(drift["rehearsed"]) <= 0.6 * np.mean(drift["alone"])

    # The theme is still learnt.
    fresh = themed_photo(99)
    grey = np.repeat(np.asarray(Image.fromarray(fresh).convert("L"))[..., None], 3, -1)
    Image.fromarray(grey).save(tmp_path / "fresh-grey.png")
    run(colorcam, "colorize", tmp_path / "fresh-grey.png", tmp_path / "base.png", "--whole")
    run(colorcam, "colorize", tmp_path / "fresh-grey.png", tmp_path / "mine.png", "--whole", "--model",
        bundles["rehearsed"])
    base_hue = hue_agreement(np.asarray(Image.open(tmp_path / "base.png")), fresh)
    mine_hue = hue_agreement(np.asarray(Image.open(tmp_path / "mine.png")), fresh)
    print(f"unseen themed photo: hue agreement base {base_hue:.3f}, rehearsed bundle {mine_hue:.3f}")
    assert mine_hue >= base_hue + 0.10
