"""Disk faults (issue 9): `colorcam replay` with its output or its trace on a full file system.

The full file system is a small tmpfs mounted in a private user + mount namespace (`unshare -rm`, no root needed
where unprivileged user namespaces are enabled, as on Debian 12); the mount exists only for that one command, so
the files left on it are copied out before the namespace ends. Where `unshare -rm` is refused the tests skip.

Contract (Sources/Stream/WriteErrorPolicy.swift, `colorcam replay --help`):
  * exit 74 and one stderr line naming the file and "No space left on device";
  * --on-write-error stop (default): the run stops; continue: the failing file is abandoned and the run goes on
    (the trace's summary says `output_abandoned`, the run summary says "output abandoned");
  * no OUT.y4m and no .OUT.y4m.tmp-PID is left for a failed output; a failed trace is kept, cut where the write
    failed, and still loads in `colorcam trace-report` (exit 0/1) as truncated.
"""
import json
import shlex
import shutil
import subprocess

import pytest

from conftest import ROOT, run

WIDTH, HEIGHT, FRAMES = 64, 48, 300
FRAME_BYTES = WIDTH * HEIGHT * 3 // 2


def unshare_works():
    if not shutil.which("unshare"):
        return False
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && echo ok"],
                          capture_output=True, text=True)
    return proc.stdout.strip() == "ok"


pytestmark = pytest.mark.skipif(not unshare_works(), reason="unshare -rm (user + mount namespace) not available")


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """300 frames of 64×48 4:2:0, each a different grey, plain FRAME lines."""
    path = tmp_path_factory.mktemp("disk-faults") / "clip.y4m"
    with open(path, "wb") as out:
        out.write(b"YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C420jpeg\n" % (WIDTH, HEIGHT))
        for n in range(FRAMES):
            out.write(b"FRAME\n" + bytes([n % 256]) * FRAME_BYTES)
    return path


def replay_on_full_fs(colorcam, tmp_path, clip, tmpfs_size, on_fs, extra=()):
    """Runs replay with `on_fs` ("output" or "trace") on a tmpfs of `tmpfs_size`, the other file in tmp_path.

    Returns (exit code, stderr, {name: bytes} of every file left on the tmpfs, host folder).
    """
    mount, kept, host = tmp_path / "fs", tmp_path / "kept", tmp_path / "host"
    for folder in (mount, kept, host):
        folder.mkdir()
    output = (mount if on_fs == "output" else host) / "out.y4m"
    trace = (mount if on_fs == "trace" else host) / "t.json"
    # --fps 300: a 1 s realtime run, so a trace that fails mid-way is noticed while frames still flow.
    command = [colorcam, "replay", clip, "--fps", "300", "--passthrough", "--output", output, "--trace", trace,
               *extra]
    script = (f"mount -t tmpfs -o size={tmpfs_size} tmpfs {shlex.quote(str(mount))} || exit 99\n"
              f"{shlex.join(str(c) for c in command)}\nrc=$?\n"
              f"cp -a {shlex.quote(str(mount))}/. {shlex.quote(str(kept))}/\nexit $rc\n")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 99, proc.stderr
    left = {p.name: p.read_bytes() for p in kept.iterdir()}
    return proc.returncode, proc.stderr, left, host


def error_lines(stderr):
    """The lines that report an error (the summary and "output abandoned" lines do not)."""
    return [line for line in stderr.splitlines() if "No space left" in line or "failed" in line]


def y4m_frames(data):
    header_end = data.index(b"\n") + 1
    body = len(data) - header_end
    assert body % (len(b"FRAME\n") + FRAME_BYTES) == 0, "cut frame"
    return body // (len(b"FRAME\n") + FRAME_BYTES)


def test_output_on_full_fs_stops_with_74_and_leaves_no_output(colorcam, tmp_path, clip):
    rc, stderr, left, host = replay_on_full_fs(colorcam, tmp_path, clip, "64k", "output")
    assert rc == 74, stderr
    errors = error_lines(stderr)
    assert len(errors) == 1, stderr
    assert "out.y4m" in errors[0] and "No space left on device" in errors[0]
    assert left == {}, f"left on the full file system: {sorted(left)}"
    report = run(colorcam, "trace-report", host / "t.json", "--json", check=False)
    assert report.returncode in (0, 1), report.stderr
    summary = [e for e in json.loads((host / "t.json").read_text()) if e["name"] == "summary"][0]["args"]
    assert summary["completed"] is False
    assert summary["frames_captured"] < FRAMES  # stopped, not run to the end


def test_output_on_full_fs_continue_abandons_output_and_runs_on(colorcam, tmp_path, clip):
    rc, stderr, left, host = replay_on_full_fs(colorcam, tmp_path, clip, "64k", "output",
                                               ["--on-write-error", "continue"])
    assert rc == 74, stderr
    errors = error_lines(stderr)
    assert len(errors) == 1 and "out.y4m" in errors[0] and "No space left on device" in errors[0], stderr
    assert "output abandoned after" in stderr
    assert left == {}, f"left on the full file system: {sorted(left)}"
    events = json.loads((host / "t.json").read_text())
    summary = [e for e in events if e["name"] == "summary"][0]["args"]
    assert summary["output_abandoned"] is True and "No space left on device" in summary["output_error"]
    assert 0 < summary["output_frames_written"] < FRAMES
    assert summary["frames_captured"] == FRAMES  # the pipeline ran on to the end of the clip


def test_trace_on_full_fs_stops_and_publishes_no_output(colorcam, tmp_path, clip):
    rc, stderr, left, host = replay_on_full_fs(colorcam, tmp_path, clip, "8k", "trace")
    assert rc == 74, stderr
    errors = error_lines(stderr)
    assert len(errors) == 1 and "t.json" in errors[0] and "No space left on device" in errors[0], stderr
    assert not (host / "out.y4m").exists() and not list(host.glob(".out.y4m.tmp-*"))
    assert sorted(left) == ["t.json"]  # no temporary left beside it
    (tmp_path / "cut.json").write_bytes(left["t.json"])
    report = run(colorcam, "trace-report", tmp_path / "cut.json", check=False)
    assert report.returncode in (0, 1), report.stderr
    assert "trace truncated" in report.stdout
    assert b'"summary"' not in left["t.json"]  # nothing claims the run ended cleanly


def test_trace_on_full_fs_continue_keeps_the_whole_output(colorcam, tmp_path, clip):
    rc, stderr, left, host = replay_on_full_fs(colorcam, tmp_path, clip, "8k", "trace",
                                               ["--on-write-error", "continue"])
    assert rc == 74, stderr
    errors = error_lines(stderr)
    assert len(errors) == 1 and "t.json" in errors[0] and "No space left on device" in errors[0], stderr
    assert y4m_frames((host / "out.y4m").read_bytes()) > 0
    (tmp_path / "cut.json").write_bytes(left["t.json"])
    report = run(colorcam, "trace-report", tmp_path / "cut.json", check=False)
    assert report.returncode in (0, 1) and "trace truncated" in report.stdout, report.stderr


def test_trace_header_on_full_fs_is_one_clear_error(colorcam, tmp_path, clip):
    """A file system too full for even the trace's header: exit 74 before any frame, nothing left."""
    mount = tmp_path / "fs"
    mount.mkdir()
    script = (f"mount -t tmpfs -o size=4k tmpfs {mount} && head -c 4096 /dev/zero > {mount}/filler || exit 99\n"
              f"{shlex.join([colorcam, 'replay', str(clip), '--passthrough', '--trace', str(mount / 't.json')])}\n"
              f"rc=$?; ls -A {mount}; exit $rc")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 74, proc.stderr
    assert proc.stdout.split() == ["filler"]
    errors = error_lines(proc.stderr)
    assert len(errors) == 1 and "t.json" in errors[0] and "No space left on device" in errors[0], proc.stderr
