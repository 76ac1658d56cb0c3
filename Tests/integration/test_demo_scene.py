"""The demo scene and its checkers (tools/demo): the generator is deterministic and declares what it shows; the
scene is detectable; score.py and check_output.py pass known-good inputs and fail deliberately wrong ones."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, run

PY = sys.executable
DEMO = ROOT / "tools/demo"
ORIGINALS = ROOT / "Assets/demo-photos"
FRAME_BYTES = 640 * 480 * 3 // 2


def scene_cmd(out, truth, *extra):
    return [PY, DEMO / "scene.py", "--out", out, "--truth", truth, "--quiet", *extra]


@pytest.fixture(scope="module")
def scene(demo_scene):
    """The full demo scene, seed 1 (rendered once per session, conftest.demo_scene): (y4m path, truth dict, folder)."""
    path, truth = demo_scene
    return path, json.loads(truth.read_text()), path.parent


def frames_of(path):
    """(header line, [frame = FRAME line + payload bytes])."""
    data = Path(path).read_bytes()
    header, _, body = data.partition(b"\n")
    frames, at = [], 0
    while at < len(body):
        line_end = body.index(b"\n", at) + 1
        assert body.startswith(b"FRAME", at), f"{path}: no FRAME line at body offset {at}"
        frames.append(body[at:line_end + FRAME_BYTES])
        at = line_end + FRAME_BYTES
    assert at == len(body), f"{path}: truncated last frame"
    return header, frames


def write_frames(path, header, frames):
    Path(path).write_bytes(header + b"\n" + b"".join(frames))


# --- the generator -------------------------------------------------------------------------------------------------

def test_same_seed_same_bytes_any_worker_count_and_other_seed_differs(scene, tmp_path):
    path, truth, _ = scene
    run(*scene_cmd(tmp_path / "a.y4m", tmp_path / "a.json", "--frames", "12", "--workers", "1"))
    run(*scene_cmd(tmp_path / "b.y4m", tmp_path / "b.json", "--frames", "12", "--seed", "2"))
    full = path.read_bytes()
    short = (tmp_path / "a.y4m").read_bytes()
    assert full[:len(short)] == short, "seed 1 rendered again (1 worker, 12 frames) differs from the full clip"
    assert json.loads((tmp_path / "a.json").read_text())["frames"] == truth["frames"][:12]
    other = (tmp_path / "b.y4m").read_bytes()
    assert len(other) == len(short) and other != short, "seed 2 rendered the same bytes as seed 1"


def test_y4m_is_640x480_300_frames_30fps_per_ffprobe(scene, ffmpeg):
    path, _, _ = scene
    ffprobe = shutil.which("ffprobe")
    assert ffprobe, "ffprobe is required (apt-get install ffmpeg)"
    out = run(ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
              "stream=width,height,r_frame_rate,nb_read_frames,pix_fmt", "-of", "json", path).stdout
    stream = json.loads(out)["streams"][0]
    assert (stream["width"], stream["height"]) == (640, 480)
    assert stream["r_frame_rate"] == "30/1"
    assert int(stream["nb_read_frames"]) == 300
    assert stream["pix_fmt"] in ("yuvj420p", "yuv420p")


def test_truth_declares_prints_that_appear_and_disappear_as_they_do(scene):
    _, truth, _ = scene
    frames = truth["frames"]
    assert len(frames) == 300 and [f["frame"] for f in frames] == list(range(300))
    assert [f["timestamp_us"] for f in frames] == [i * 1_000_000 // 30 for i in range(300)]
    roles = {p["role"]: p for p in truth["prints"]}
    assert set(roles) == {"static", "removed", "placed"}
    assert {p["file"] for p in truth["prints"]} == {p.name for p in ORIGINALS.glob("*.png")}
    for p in truth["prints"]:
        listed = [f["frame"] for f in frames if any(e["print"] == p["print"] for e in f["photos"])]
        assert listed == list(range(p["first_frame"], p["last_frame"] + 1)), f"print {p['print']} flickers"
        assert max(p["size"]) >= 0.35 * 480, f"print {p['print']} is too small to colorize: {p['size']}"
        rest = range(p["rest_frames"][0], p["rest_frames"][1] + 1)
        for f in frames:
            entry = next((e for e in f["photos"] if e["print"] == p["print"]), None)
            if f["frame"] in rest:
                assert entry and entry["in_frame"] and not entry["moving"]
            if entry:
                c = np.asarray(entry["corners"])
                inside = (c >= 0).all() and (c[:, 0] <= 640).all() and (c[:, 1] <= 480).all()
                assert inside == entry["in_frame"], f"frame {f['frame']}: in_frame disagrees with the corners"
    assert roles["static"]["first_frame"] == 0 and roles["static"]["last_frame"] == 299
    assert roles["removed"]["first_frame"] == 0 and 150 <= roles["removed"]["last_frame"] < 290
    assert 30 < roles["placed"]["first_frame"] < 150 and roles["placed"]["last_frame"] == 299
    assert len(frames[0]["photos"]) == 2 and len(frames[299]["photos"]) == 2
    assert max(len(f["photos"]) for f in frames) == 3


def test_scene_is_detectable(colorcam, scene):
    path, _, folder = scene
    proc = run(PY, DEMO / "coverage.py", "--truth", folder / "truth.json", "--scene", path, "--colorcam", colorcam,
               "--json", "--min-coverage", "0.9", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    for p in report["prints"]:
        assert p["rest_coverage"] >= 0.9, p


# --- score.py ------------------------------------------------------------------------------------------------------

def score(photos, *extra):
    return subprocess.run([PY, DEMO / "score.py", "--photos", photos, "--originals", ORIGINALS, "--json", *extra],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def saved(scene, tmp_path_factory):
    """Grey saves made from the truth (what --save-photos writes with a perfect detector and no colour)."""
    path, _, folder = scene
    out = tmp_path_factory.mktemp("saved")
    run(PY, DEMO / "reference_save.py", "--scene", path, "--truth", folder / "truth.json", "--out", out)
    return out


def copy_saves(source, target):
    shutil.copytree(source, target)
    return target


def test_score_accepts_one_save_per_photo_and_reports_grey_as_no_better(saved, scene):
    proc = score(saved, "--truth", scene[2] / "truth.json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["photo_set_ok"] and len(result["photos"]) == 3
    assert all(p["correlation"] > 0.9 and p["rotation_deg"] == 0 for p in result["photos"])
    o = result["overall"]
    assert abs(o["psnr_db"] - o["grey_psnr_db"]) < 0.1 and not o["better_than_grey"]
    assert score(saved, "--require-better").returncode == 1
    # grey has no hue: it cannot beat sepia on hue agreement
    assert all(p["hue_agreement"] == 0 and p["sepia_hue_agreement"] > 0 for p in result["photos"])
    assert not o["each_beats_baselines"]
    proc = score(saved, "--require-baselines")
    assert proc.returncode == 1 and "sepia on hue agreement" in proc.stderr, proc.stderr


def test_score_fails_a_duplicated_photo(saved, tmp_path):
    photos = copy_saves(saved, tmp_path / "dup")
    shutil.copy(photos / "photo-2.png", photos / "photo-9.png")
    meta = json.loads((photos / "photo-2.json").read_text())
    meta["track"] = 9
    (photos / "photo-9.json").write_text(json.dumps(meta))
    proc = score(photos)
    assert proc.returncode == 1 and "saved 2 times" in proc.stderr, proc.stderr


def test_score_fails_a_missing_photo_and_an_unmatched_one(saved, tmp_path):
    photos = copy_saves(saved, tmp_path / "missing")
    (photos / "photo-3.png").unlink()
    (photos / "photo-3.json").unlink()
    proc = score(photos)
    assert proc.returncode == 1 and "no saved photo matches it" in proc.stderr, proc.stderr
    noise = np.random.default_rng(5).integers(0, 256, (150, 240, 3), dtype=np.uint8)
    Image.fromarray(noise).save(photos / "photo-3.png")
    meta = {"track": 3, "first_frame": 0, "last_frame": 1, "corners": [[0, 0]] * 4, "model": "x", "width": 240,
            "height": 150}
    (photos / "photo-3.json").write_text(json.dumps(meta))
    proc = score(photos)
    assert proc.returncode == 1 and "matches no original" in proc.stderr, proc.stderr


def test_score_matches_rotated_saves_and_calls_true_colours_better(tmp_path):
    photos = tmp_path / "true"
    photos.mkdir()
    for track, original in enumerate(sorted(ORIGINALS.glob("*.png")), start=1):
        image = Image.open(original).convert("RGB")
        if track == 2:
            image = image.transpose(Image.Transpose.ROTATE_90)
        image.save(photos / f"photo-{track}.png")
        meta = {"track": track, "first_frame": 0, "last_frame": 299, "corners": [[0, 0]] * 4, "model": "truth",
                "width": image.width, "height": image.height}
        (photos / f"photo-{track}.json").write_text(json.dumps(meta))
    proc = score(photos, "--require-better")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert [p["rotation_deg"] for p in result["photos"]] == [0, 90, 0]
    assert all(p["psnr_db"] > 40 and p["ab_l1"] < 1 for p in result["photos"])
    assert result["overall"]["better_than_grey"]
    # the true colours agree in hue almost everywhere and beat both baselines on every photo
    assert all(p["hue_agreement"] > 0.95 for p in result["photos"])
    assert score(photos, "--require-baselines").returncode == 0


def test_score_rejects_a_sidecar_that_disagrees_with_its_png(saved, tmp_path):
    photos = copy_saves(saved, tmp_path / "bad")
    meta = json.loads((photos / "photo-1.json").read_text())
    meta["width"] += 1
    (photos / "photo-1.json").write_text(json.dumps(meta))
    proc = score(photos)
    assert proc.returncode == 65 and "photo-1.json" in proc.stderr and len(proc.stderr.splitlines()) == 1


# --- check_output.py -----------------------------------------------------------------------------------------------

FRAMES = 24


@pytest.fixture(scope="module")
def short_clip(scene, tmp_path_factory):
    """The scene's first FRAMES frames and truth (check_output is exact per frame; a short clip keeps tests fast)."""
    path, truth, _ = scene
    folder = tmp_path_factory.mktemp("short")
    header, frames = frames_of(path)
    write_frames(folder / "in.y4m", header, frames[:FRAMES])
    cut = dict(truth, frames=truth["frames"][:FRAMES])
    (folder / "truth.json").write_text(json.dumps(cut))
    return folder, header, frames[:FRAMES], cut


def check_output(folder, output, background):
    return subprocess.run([PY, DEMO / "check_output.py", "--input", folder / "in.y4m", "--output", output,
                           "--truth", folder / "truth.json", "--background", background, "--json", "--quiet"],
                          capture_output=True, text=True)


def planes(frame):
    """(FRAME line, luma 480×640, chroma 2×240×320) — writable copies."""
    line, _, payload = frame.partition(b"\n")
    body = np.frombuffer(payload, np.uint8).copy()
    return line + b"\n", body[:640 * 480].reshape(480, 640), body[640 * 480:].reshape(2, 240, 320)


def pack(line, y, chroma):
    return line + y.tobytes() + chroma.tobytes()


def untagged(frame):
    return b"FRAME\n" + frame.partition(b"\n")[2]


def far_from_prints(truth_frame):
    """A luma pixel (x, y) at least 20 px from every print."""
    sys.path.insert(0, str(DEMO))
    import check_output as co
    import cv2
    near = np.zeros((480, 640), np.uint8)
    for p in truth_frame["photos"]:
        near |= co.quad_mask(p["corners"], 480, 640)
    free = np.argwhere(cv2.dilate(near, np.ones((41, 41), np.uint8)) == 0)
    assert len(free), "no table pixel far from the prints"
    y, x = free[len(free) // 2]
    return int(x) & ~1, int(y) & ~1


def gray_version(frames):
    out = []
    for frame in frames:
        line, y, chroma = planes(frame)
        out.append(pack(line, y, np.full_like(chroma, 128)))
    return out


def test_check_output_passes_the_input_itself_and_its_gray_version(short_clip, tmp_path):
    folder, header, frames, _ = short_clip
    proc = check_output(folder, folder / "in.y4m", "original")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["pass"] and report["inside_dl"]["max"] == 0 and report["outside"]["frames_exact"] == FRAMES
    write_frames(tmp_path / "gray.y4m", header, gray_version(frames))
    proc = check_output(folder, tmp_path / "gray.y4m", "gray")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The prints are grey, so dropping their (noise-level) chroma keeps L well within a unit.
    assert json.loads(proc.stdout)["inside_dl"]["max"] < 1.0
    proc = check_output(folder, folder / "in.y4m", "gray")
    assert proc.returncode == 1, "the table's own chroma must fail a gray-background check"


@pytest.mark.parametrize("change", ["luma", "chroma"])
def test_check_output_fails_one_changed_outside_value(short_clip, tmp_path, change):
    folder, header, frames, truth = short_clip
    index = FRAMES // 2
    x, y0 = far_from_prints(truth["frames"][index])
    frames = gray_version(frames)
    line, y, chroma = planes(frames[index])
    if change == "luma":
        y[y0, x] ^= 1
    else:
        chroma[1, y0 // 2, x // 2] = 129
    frames[index] = pack(line, y, chroma)
    write_frames(tmp_path / "bad.y4m", header, frames)
    proc = check_output(folder, tmp_path / "bad.y4m", "gray")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["outside"]["frames_failing"] == 1
    failure = report["outside"]["first_failures"][0]
    assert failure["frame"] == index
    assert (failure["luma_px"], failure["chroma_samples"]) == ((1, 0) if change == "luma" else (0, 1))


def test_check_output_fails_a_changed_l_inside_a_print(short_clip, tmp_path):
    folder, header, frames, truth = short_clip
    sys.path.insert(0, str(DEMO))
    import check_output as co
    index = 3
    line, y, chroma = planes(frames[index])
    mask = co.quad_mask(truth["frames"][index]["photos"][0]["corners"], 480, 640).astype(bool)
    y[mask] = np.clip(y[mask].astype(int) + 8, 0, 255).astype(np.uint8)
    changed = list(frames)
    changed[index] = pack(line, y, chroma)
    write_frames(tmp_path / "brighter.y4m", header, changed)
    proc = check_output(folder, tmp_path / "brighter.y4m", "original")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["outside"]["frames_failing"] == 0 and report["inside_dl"]["max"] > 2


def test_check_output_matches_dropped_frames_by_timestamp_and_refuses_what_it_cannot_match(short_clip, tmp_path):
    folder, header, frames, _ = short_clip
    kept = [f for i, f in enumerate(frames) if i % 3 != 1]
    write_frames(tmp_path / "dropped.y4m", header, kept)
    proc = check_output(folder, tmp_path / "dropped.y4m", "original")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert (report["frames"], report["input_frames"], report["matched_by"]) == (len(kept), FRAMES, "Xts_us")
    # A dropped frame with the tags stripped cannot be matched: refused, not compared against the wrong frame.
    write_frames(tmp_path / "untagged.y4m", header, [untagged(f) for f in kept])
    proc = check_output(folder, tmp_path / "untagged.y4m", "original")
    assert proc.returncode == 65 and "frame counts differ" in proc.stderr, proc.stderr
    # Untagged but complete: matched in order.
    write_frames(tmp_path / "untagged-all.y4m", header, [untagged(f) for f in frames])
    proc = check_output(folder, tmp_path / "untagged-all.y4m", "original")
    assert proc.returncode == 0 and json.loads(proc.stdout)["matched_by"] == "order"
    # A timestamp no input frame has.
    wrong = list(frames)
    wrong[5] = b"FRAME Xts_us=170000\n" + frames[5].partition(b"\n")[2]
    write_frames(tmp_path / "badts.y4m", header, wrong)
    proc = check_output(folder, tmp_path / "badts.y4m", "original")
    assert proc.returncode == 65 and "Xts_us=170000" in proc.stderr, proc.stderr
