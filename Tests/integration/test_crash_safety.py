"""Crash safety (issue 9): SIGKILL `colorcam replay` at seeded random moments, then check what is left.

A short version of tools/profile/crash_trials.py (which runs 20 trials and prints a table): 4 kills, alternating
--passthrough and the default model, on a 20-frame demo scene. After every kill:
  * the trace, if it exists under its name, loads in `colorcam trace-report` (exit 0 or 1, never 65/70);
  * every Y4M left (out.y4m or the temporary .out.y4m.tmp-PID) is header + whole frames (+ at most one cut frame,
    only in the temporary) and ffprobe reads exactly the whole frames;
  * out.y4m never ends in a cut frame.
The checks themselves are tools/profile/crash_trials.py's, so the table and this test cannot disagree.
"""
import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT, run

spec = importlib.util.spec_from_file_location("crash_trials", ROOT / "tools/profile/crash_trials.py")
crash_trials = importlib.util.module_from_spec(spec)
spec.loader.exec_module(crash_trials)


@pytest.fixture(scope="module")
def short_scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crash-scene")
    clip = folder / "scene.y4m"
    run(sys.executable, ROOT / "tools/demo/scene.py", "--out", clip, "--truth", folder / "truth.json",
        "--frames", "20", "--quiet")
    return clip


def test_y4m_layout_sees_a_cut_frame(tmp_path):
    """The checker itself: a file cut inside a frame is whole frames + cut bytes, and ffprobe skips the cut."""
    header = b"YUV4MPEG2 W4 H2 F30:1 Ip A1:1 C420jpeg\n"
    frame = b"FRAME\n" + bytes(4 * 2 + 2 * 2)
    path = tmp_path / "cut.y4m"
    path.write_bytes(header + frame * 3 + frame[:9])
    assert crash_trials.y4m_layout(path) == (3, 9, 12)
    assert crash_trials.ffprobe_frames(path) == 3
    path.write_bytes(header + frame * 2)
    assert crash_trials.y4m_layout(path) == (2, 0, 12)


def test_sigkill_leaves_loadable_traces_and_valid_y4m_prefixes(colorcam, short_scene, tmp_path):
    import io
    table = io.StringIO()
    failed = crash_trials.run_trials(colorcam, short_scene, tmp_path, trials=4, seed=7, out=table)
    assert not failed, table.getvalue()


def test_trace_under_its_name_always_has_its_header(colorcam, short_scene, tmp_path):
    """Killed as early as we can after the trace appears under its name, it still loads (header written first)."""
    trace, out = tmp_path / "t.json", tmp_path / "out.y4m"
    proc = subprocess.Popen([colorcam, "replay", str(short_scene), "--passthrough", "--trace", str(trace),
                             "--output", str(out), "--quiet"], cwd=ROOT)
    try:
        while proc.poll() is None and not trace.exists():
            pass
        proc.kill()
    finally:
        proc.wait()
    assert trace.exists()
    report = run(colorcam, "trace-report", trace, check=False)
    assert report.returncode in (0, 1), report.stderr
    assert "config: command replay" in report.stdout
