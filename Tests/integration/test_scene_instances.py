"""The scene generator's table texture instances (tools/scenes/dr_textures.py, dr_render.py --texture-instances):
the train split's whole instance range never draws a table the held-out split can draw, a range changes a scene's
table and nothing else, and a bad range is a usage error."""
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools/scenes"))
import dr_render  # noqa: E402
import dr_textures  # noqa: E402


def seeds(split):
    """Every seed a table of `split` can be drawn from (its parameters and its layout), over the whole range."""
    out = set()
    for k in range(len(dr_textures.KINDS)):
        base = dr_textures.SPLIT_BASE[split] + k * dr_textures.MAX_INSTANCES
        out.update(range(base, base + dr_textures.MAX_INSTANCES))
        out.update(range(base + 500_000, base + 500_000 + dr_textures.MAX_INSTANCES))
    return out


def test_the_train_splits_whole_instance_range_is_disjoint_from_the_heldout_split():
    train, heldout = seeds("train"), seeds("heldout")
    assert len(train) == 2 * len(dr_textures.KINDS) * dr_textures.MAX_INSTANCES  # no two kinds share a seed
    assert not train & heldout


def test_instance_ranges_parse_and_refuse():
    assert dr_textures.instance_range("", "train") == (0, dr_textures.INSTANCES_PER_KIND["train"])
    assert dr_textures.instance_range("", "heldout") == (0, dr_textures.INSTANCES_PER_KIND["heldout"])
    assert dr_textures.instance_range("9000:10000", "train") == (9000, 10000)
    for bad in ("5:5", "10:3", "-1:4", f"0:{dr_textures.MAX_INSTANCES + 1}", "40", "a:b"):
        with pytest.raises(ValueError):
            dr_textures.instance_range(bad, "train")


def test_a_range_changes_the_table_and_nothing_else():
    photos = [("grey", np.full((300, 200, 3), 128, np.uint8)), ("dark", np.full((200, 300, 3), 90, np.uint8))]
    seed = 90 * 1_000_000 + 3
    frame_a, corners_a, scene_a = dr_render.render(seed, photos, 320, 240, "train")
    frame_b, corners_b, scene_b = dr_render.render(seed, photos, 320, 240, "train", instances=(9000, 10000))
    assert scene_a["table"]["kind"] == scene_b["table"]["kind"]
    assert scene_a["table"]["instance"] < dr_textures.INSTANCES_PER_KIND["train"]
    assert 9000 <= scene_b["table"]["instance"] < 10000
    assert len(corners_a) == len(corners_b)
    for a, b in zip(corners_a, corners_b):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b))
    assert np.abs(frame_a.astype(int) - frame_b.astype(int)).mean() > 1  # the table did change


def test_a_bad_range_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "tools/scenes/dr_render.py"), "stills", "--split", "train",
                           "--count", "1", "--texture-instances", "20:10", "--out", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "texture instances '20:10'" in proc.stderr
    assert not (tmp_path / "s").exists()


def test_a_training_pack_refuses_the_validation_tables(tmp_path):
    lo, hi = dr_textures.VALIDATION_INSTANCES
    proc = subprocess.run([sys.executable, str(ROOT / "tools/scenes/dr_render.py"), "pack", "--split", "train",
                           "--count", "1", "--seed", "41", "--texture-instances", f"0:{lo + 1}",
                           "--out", str(tmp_path / "p.npz")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "validation tables" in proc.stderr
    assert not (tmp_path / "p.npz").exists()


def test_the_overlap_rate_decides_whether_prints_may_overlap():
    """Training packs may raise how often prints overlap (`dr_render.py pack --overlap-rate`): at 0 no print overlaps
    another, at 1 every scene of two or more prints may, and the rate changes neither the table nor the camera."""
    photos = [("grey", np.full((300, 200, 3), 128, np.uint8)), ("dark", np.full((200, 300, 3), 90, np.uint8))]
    overlapping = {0.0: 0, 1.0: 0}
    for k in range(16):
        seed = 59 * 1_000_000 + k
        scenes = {rate: dr_render.render(seed, photos, 320, 240, "train", overlap_rate=rate)[2] for rate in overlapping}
        assert scenes[0.0]["table"] == scenes[1.0]["table"] and scenes[0.0]["camera"] == scenes[1.0]["camera"]
        for rate, scene in scenes.items():
            overlapping[rate] += sum(1 for p in scene["photos"] if p["overlap"])
    assert overlapping[0.0] == 0
    assert overlapping[1.0] >= 4, overlapping


@pytest.mark.parametrize("args", [["pack", "--overlap-rate", "1.5"], ["stills", "--overlap-rate", "0.6"]])
def test_a_bad_overlap_rate_is_a_usage_error(tmp_path, args):
    out = tmp_path / "s.npz"
    proc = subprocess.run([sys.executable, str(ROOT / "tools/scenes/dr_render.py"), args[0], "--split", "train",
                           "--count", "1", "--seed", "59", *args[1:], "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "--overlap-rate" in proc.stderr.strip().splitlines()[-1]
    assert not out.exists()
