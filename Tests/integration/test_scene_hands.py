"""The scene generator's hands (tools/scenes/dr_hands.py, dr_render.py --hands): the arms variant is the plain
hand plus a thumb and a forearm that reaches the frame's edge, drawn from a stream of its own, so a scene keeps its
prints, table and camera; plain scenes are what they were."""
import subprocess
import sys

import numpy as np

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools/scenes"))
import dr_hands  # noqa: E402
import dr_render  # noqa: E402

PHOTOS = [("grey", np.full((300, 200, 3), 128, np.uint8)), ("dark", np.full((200, 300, 3), 90, np.uint8))]
CORNERS = [(120.0, 90.0), (200.0, 96.0), (196.0, 150.0), (116.0, 144.0)]


def test_an_arm_adds_to_the_plain_hand_reaches_the_frames_edge_and_leaves_the_scenes_draws_alone():
    for k in range(12):
        plain_rng, arm_rng = np.random.default_rng(k), np.random.default_rng(k)
        plain, _ = dr_hands.draw_hand(plain_rng, CORNERS, 320, 240)
        arms, rgb = dr_hands.draw_hand(arm_rng, CORNERS, 320, 240, arm_rng=np.random.default_rng([k, 1]))
        # The scene's own stream is drawn exactly as without the arm.
        assert plain_rng.bit_generator.state == arm_rng.bit_generator.state
        assert rgb.shape == (240, 320, 3)
        # The plain hand is (nearly) all there — fingers may be a little shorter —, and the arm adds area …
        assert (np.minimum(plain, arms).sum()) >= 0.8 * plain.sum(), k
        assert arms.sum() > 1.5 * plain.sum(), k
        # … out to the frame's edge, which the plain hand does not reach here.
        border = np.concatenate([arms[0], arms[-1], arms[:, 0], arms[:, -1]])
        assert border.max() > 0.5, k
        assert np.concatenate([plain[0], plain[-1], plain[:, 0], plain[:, -1]]).max() < 0.5


def test_a_scene_with_arms_keeps_its_prints_table_and_camera():
    changed = 0
    for k in range(24):
        seed = 58 * 1_000_000 + k
        fp, cp, sp = dr_render.render(seed, PHOTOS, 320, 240, "train")
        fa, ca, sa = dr_render.render(seed, PHOTOS, 320, 240, "train", hands="arms")
        assert sp["table"] == sa["table"] and sp["camera"] == sa["camera"]
        for a, b in zip(cp, ca):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b))
        with_hand = any(p["hand_cover"] > 0 for p in sp["photos"])
        assert with_hand or np.array_equal(fp, fa), k  # no hand: the very same frame
        changed += with_hand and not np.array_equal(fp, fa)
    assert changed >= 3, changed


def test_a_bad_hand_style_is_a_usage_error(tmp_path):
    out = tmp_path / "s"
    proc = subprocess.run([sys.executable, str(ROOT / "tools/scenes/dr_render.py"), "stills", "--split", "train",
                           "--count", "1", "--seed", "58", "--hands", "gloves", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "--hands" in proc.stderr.strip().splitlines()[-1]
    assert not out.exists()
