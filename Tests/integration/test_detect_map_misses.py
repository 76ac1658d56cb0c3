"""tools/profile/detect_map_misses.py sorts missed prints by whether the segmenter's maps see them: on a few rendered
training-split stills its counts add up, and a folder with no scenes is refused with one line."""
import json
import sys

from conftest import ROOT, run

PY = sys.executable


def test_every_missed_print_is_sorted_once(colorcam, tmp_path):
    out = tmp_path / "stills"
    run(PY, ROOT / "tools/scenes/dr_render.py", "stills", "--split", "train", "--count", "12", "--seed", "93",
        "--out", out, timeout=300)
    proc = run(PY, ROOT / "tools/profile/detect_map_misses.py", "--out", out, "--colorcam", colorcam, "--list",
               timeout=600)
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    truth = json.loads((out / "truth.json").read_text())
    assert counts["prints"] == sum(len(s["photos"]) for s in truth["scenes"]) > 0
    sorted_misses = sum(counts["maps_see"].values()) + sum(counts["maps_do_not"].values())
    assert sorted_misses == counts["missed"], counts
    listed = [line for line in proc.stdout.splitlines() if line.startswith("  scene_")]
    assert len(listed) == counts["missed"], proc.stdout


def test_a_folder_without_scenes_is_refused(colorcam, tmp_path):
    proc = run(PY, ROOT / "tools/profile/detect_map_misses.py", "--out", tmp_path, "--colorcam", colorcam,
               check=False)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "truth.json" in lines[0] and "missing" in lines[0], proc.stderr
