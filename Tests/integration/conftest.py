"""Shared fixtures for the CLI integration suite: the colorcam binary, ffmpeg as the oracle, temp dirs."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def colorcam():
    path = Path(os.environ.get("COLORCAM", ROOT / ".build/debug/colorcam"))
    if not path.is_absolute():
        path = ROOT / path
    assert path.exists(), f"colorcam binary not found at {path}: run 'swift build' (or make test)"
    return str(path)


@pytest.fixture(scope="session")
def ffmpeg():
    exe = shutil.which("ffmpeg")
    assert exe, "ffmpeg is required as the test oracle: apt-get install ffmpeg (make test installs it)"
    return exe


def run(*args, check=True, **kwargs):
    """Runs a command, returns CompletedProcess with text output."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


def framemd5(path):
    """Per-frame MD5s of a video, as ffmpeg decodes it."""
    out = run("ffmpeg", "-v", "error", "-i", path, "-f", "framemd5", "-").stdout
    return [line.split(",")[-1].strip() for line in out.splitlines() if line and not line.startswith("#")]


@pytest.fixture(scope="session")
def demo_scene(tmp_path_factory):
    """The demo recording (tools/demo/scene.py, seed 1), rendered once per session: (scene.y4m, truth.json)."""
    import sys
    folder = tmp_path_factory.mktemp("demo-scene")
    scene, truth = folder / "scene.y4m", folder / "truth.json"
    run(sys.executable, ROOT / "tools/demo/scene.py", "--out", scene, "--truth", truth, "--quiet")
    return scene, truth


def realtime_attempts(measure, attempts=3):
    """Runs a real-time measurement up to `attempts` times; passes on the first attempt whose timing holds.

    `measure(attempt)` raises (via assert) on anything that is not timing — wrong frame counts, a missing log line —
    which fails the test at once, and returns `(timing_ok, figures)` for what depends on the machine giving the
    process its cores on time. Why: CI is a shared 2-core VM; one 100 ms pause of the whole machine (seen once,
    in one CI run where two real-time tests failed together and passed on every run here, also beside a CPU hog)
    is not the product queueing work. A product that misses its timing every time still fails, with each
    attempt's figures in the message."""
    seen = []
    for attempt in range(attempts):
        ok, figures = measure(attempt)
        print(f"attempt {attempt + 1}: {'holds' if ok else 'missed'}: {figures}")
        if ok:
            return figures
        seen.append(figures)
    raise AssertionError(f"timing missed in all {attempts} attempts: " + " | ".join(map(str, seen)))
