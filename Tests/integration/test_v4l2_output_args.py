"""`--v4l2-output` without a device (this machine has none; the vivid suite runs the real thing): bad options and
unusable nodes end the command before the first frame with one line naming the node, the right exit code, and no
output file left behind."""
import subprocess

import pytest


@pytest.fixture(scope="module")
def clip(tmp_path_factory, ffmpeg):
    path = tmp_path_factory.mktemp("v4l2out") / "clip.y4m"
    subprocess.run([ffmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30",
                    "-t", "0.5", "-pix_fmt", "yuv420p", str(path)], check=True)
    return path


@pytest.mark.parametrize("args, code, text", [
    (["--v4l2-output", "/dev/video99"], 69, "/dev/video99: cannot open output device: ENOENT"),
    (["--v4l2-output", "/dev/null"], 69, "/dev/null: not a V4L2 device (VIDIOC_QUERYCAP: ENOTTY"),
    (["--v4l2-output", "/dev/video99", "--v4l2-output-format", "RGB3"], 64,
     "--v4l2-output-format must be one of YU12, NV12"),
    (["--v4l2-output-format", "YUYV"], 64, "--v4l2-output-format needs --v4l2-output"),
    (["--v4l2-output", "/dev/video99", "--pace", "asap"], 64, "--v4l2-output needs --pace realtime"),
])
def test_replay_refuses_before_the_first_frame(colorcam, clip, tmp_path, args, code, text):
    out = tmp_path / "out.y4m"
    proc = subprocess.run([colorcam, "replay", str(clip), "--output", str(out), "--quiet"] + args,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], proc.stderr
    assert list(tmp_path.iterdir()) == [], "no output (or temporary) left behind"


def test_live_refuses_a_node_that_is_not_an_output(colorcam, clip):
    proc = subprocess.run([colorcam, "live", "--source", str(clip), "--listen", "127.0.0.1:0",
                           "--v4l2-output", "/dev/null"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 69, proc.stderr
    assert "/dev/null: not a V4L2 device" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
