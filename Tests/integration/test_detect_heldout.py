"""The detector on scenes made only of held-out table instances and held-out photos (tools/scenes/dr_render.py
--split heldout): the learned front-end (the default, `both`) must find clearly more prints than the classic edge
passes alone, and keep its precision. A short version of tools/profile/detect_heldout.py (1000 scenes, per bucket)."""
import json
import sys

from conftest import ROOT, run

PY = sys.executable


def test_the_default_detector_generalizes_beyond_the_classic_passes(colorcam, tmp_path):
    out = tmp_path / "heldout"
    proc = run(PY, ROOT / "tools/profile/detect_heldout.py", "--count", "40", "--seed", "8", "--out", out,
               "--colorcam", colorcam, "--config", "classic=--detector classic", "--config", "default=", "--json",
               timeout=900)
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    classic, default = figures["classic"], figures["default"]
    assert default["truths"] >= 80, f"the 40 held-out scenes hold only {default['truths']} prints"
    summary = (f"classic recall {classic['recall']:.3f} precision {classic['precision']:.3f}; "
               f"default recall {default['recall']:.3f} precision {default['precision']:.3f}")
    assert default["recall"] >= classic["recall"] + 0.08, summary
    assert default["precision"] >= 0.8, summary
    assert default["recall"] >= 0.55, summary
