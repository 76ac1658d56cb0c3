"""Keepsakes without hands (tools/profile/keepsake_check.py): on generated clips where a hand lies over a print at
first and is then drawn away, the photo `--save-photos` keeps of each black-and-white or toned print is a view with
no hand over it, and while the hand lies on the print it keeps its own colour in the output (not the model's). Four clips of the training split (the ones the cover measure was developed on: a regression check;
the held-out figures are in the check's results file). The same clips replayed backwards (the print seen clear, then
the hand comes and stays): the keepsake stays the clear view."""
import os
import sys

from conftest import ROOT, run

PY = sys.executable


def test_saved_photos_are_views_without_the_hand(colorcam, tmp_path):
    for direction in ([], ["--reverse"]):
        proc = run(PY, ROOT / "tools/profile/keepsake_check.py", "--split", "train", "--count", "4", "--seed", "101",
                   "--colorcam", colorcam, "--out", tmp_path / "keepsake", "--min-hand-kept", "0.8", *direction,
                   check=False, timeout=600,
                   env={**os.environ, "COLORCAM_SCENE_CACHE": str(ROOT / ".build/scenes-cache")})
        print(proc.stdout)
        assert proc.returncode == 0, direction + [proc.stdout + proc.stderr]
        summary = proc.stdout.strip().splitlines()[-2]
        assert "0 of black-and-white or toned prints with the hand over the print" in summary, (direction, summary)
        assert "the covered print was saved in 4 of 4 clips" in summary, (direction, summary)
