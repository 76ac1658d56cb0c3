"""`colorcam replay --hint-click FRAME,X,Y,#RRGGBB`: a colour hint clicked on a print of the demo scene is applied
to that print in its own coordinates, colorizes it again (the trace's `infer` reason `hint`, one in flight as always;
a print whose first colours have not been computed yet gets the hint in them, reason `new`), and the output at the print's point turns towards the hint's hue for as long as the print is tracked; bad clicks are one-line
usage errors.
"""
import json
import re

import numpy as np
import pytest

from conftest import run

W, H = 640, 480


def y4m_frames(path):
    data = path.read_bytes()
    pos = data.index(b"\n") + 1
    frames = []
    while pos < len(data):
        pos = data.index(b"\n", pos) + 1
        frames.append(data[pos:pos + W * H * 3 // 2])
        pos += W * H * 3 // 2
    return frames


def chroma_at(frame, x, y, r=2):
    """Mean (Cb, Cr) - 128 of the 4:2:0 chroma around pixel x, y."""
    cb = np.frombuffer(frame, np.uint8, W * H // 4, W * H).reshape(H // 2, W // 2).astype(float)
    cr = np.frombuffer(frame, np.uint8, W * H // 4, W * H + W * H // 4).reshape(H // 2, W // 2).astype(float)
    ys, xs = slice(y // 2 - r, y // 2 + r + 1), slice(x // 2 - r, x // 2 + r + 1)
    return cb[ys, xs].mean() - 128, cr[ys, xs].mean() - 128


def hue_deg(cb, cr):
    return np.degrees(np.arctan2(cr, cb))


def centre(truth_path, frame_index, print_name):
    truth = json.loads(truth_path.read_text())
    photo = next(p for p in truth["frames"][frame_index]["photos"] if p["print"] == print_name)
    c = np.mean(photo["corners"], 0)
    return int(round(c[0])), int(round(c[1]))


def test_a_clicked_hint_recolours_its_print_where_clicked(colorcam, demo_scene, tmp_path):
    scene, truth = demo_scene
    x, y = centre(truth, 10, "A")  # the green maple, still for the whole clip
    hint = "#3c8c3c"  # green: the model gives this print yellow-brown by itself
    outputs = {}
    for name, extra in (("none", []), ("hint", ["--hint-click", f"10,{x},{y},{hint}"])):
        trace = tmp_path / f"{name}.json"
        proc = run(colorcam, "replay", scene, "--output", tmp_path / f"{name}.y4m", "--trace", trace, *extra)
        outputs[name] = y4m_frames(tmp_path / f"{name}.y4m")
        events = json.loads(trace.read_text())
        reasons = [e["args"]["reason"] for e in events if e.get("name") == "infer"]
        if name == "hint":
            # Which photo took the click, and its colorizations: the first one requested after the click's frame (a
            # frame's job is chosen before its clicks are applied) carries the hint. It is `hint` when the photo had
            # colours (or a job in flight) at the click, `new` when the click came before its first colorization was
            # requested (the one-in-flight scheduler busy with another photo until then): timing decides which, and
            # CI has seen both.
            said = re.search(rf"hint at {x},{y} \(frame 10\) → photo (\d+) ", proc.stderr)
            assert said, proc.stderr
            photo = int(said.group(1))
            jobs = [(e["args"]["frame"], e["args"]["reason"]) for e in events
                    if e.get("name") == "infer" and e["args"]["photo"] == photo]
            first = [(f, r) for f, r in jobs if f > 10]
            assert first and (first[0][1] == "hint" or (first[0][1] == "new" and jobs[0] == first[0])), (photo, jobs)
        else:
            assert "hint" not in reasons
    # The hint's hue in Cb/Cr: green has Cb < 0 and Cr < 0.
    want = hue_deg(-0.169 * 0x3c - 0.331 * 0x8c + 0.5 * 0x3c, 0.5 * 0x3c - 0.419 * 0x8c - 0.081 * 0x3c)
    for f in (60, 150, 290):
        before = chroma_at(outputs["none"][f], x, y)
        after = chroma_at(outputs["hint"][f], x, y)
        off_before = abs((hue_deg(*before) - want + 180) % 360 - 180)
        off_after = abs((hue_deg(*after) - want + 180) % 360 - 180)
        print(f"frame {f}: hue off the hint's by {off_before:.0f} deg without it, {off_after:.0f} with it "
              f"(chroma {np.hypot(*after):.1f})")
        # One 9x9 point on a toned print: the model weighs it against what it sees, so the hue turns towards the
        # hint's (by 29 degrees here) rather than to it; it holds while the print is tracked.
        assert off_before > 60 and off_after <= off_before - 20 and np.hypot(*after) > 3, (f, before, after)


@pytest.mark.parametrize("arg,says", [
    ("10,100,100", "--hint-click wants FRAME,X,Y,#RRGGBB"),
    ("-1,100,100,#ff0000", "--hint-click wants FRAME,X,Y,#RRGGBB"),
    ("10,640,100,#ff0000", "the point lies outside the 640x480 frame"),
])
def test_a_bad_click_is_a_one_line_usage_error(colorcam, demo_scene, tmp_path, arg, says):
    proc = run(colorcam, "replay", demo_scene[0], "--output", tmp_path / "out.y4m", "--hint-click", arg, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 64 and len(lines) == 1 and says in lines[0], proc.stderr
    assert not (tmp_path / "out.y4m").exists()
