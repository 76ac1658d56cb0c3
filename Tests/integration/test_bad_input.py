"""Bad inputs to `colorcam replay`: exit code, a one-line message naming the place, and no output left behind.

Runs `${COLORCAM:-.build/debug/colorcam} replay INPUT --pace asap --output OUT.y4m` on each malformed input.
The contract (Sources/Stream/StreamError.swift, Sources/colorcam/main.swift):
  * exit 65 for bad data, 66 for a missing input;
  * stderr is exactly one line, `colorcam: FILE: byte N, frame F: what was wrong`, naming the input file and,
    where the case has them, the byte offset and frame index;
  * neither OUT.y4m nor its temporary (`.OUT.y4m.tmp-PID`) exists afterwards.
"""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

HEADER = b"YUV4MPEG2 W4 H2 F30:1 Ip A1:1 C444\n"  # 35 bytes; frames are 24 bytes of pixels
FRAME = b"FRAME\n" + bytes([0x55]) * 24  # 30 bytes


def colorcam_binary() -> str:
    path = pathlib.Path(os.environ.get("COLORCAM", ".build/debug/colorcam"))
    if not path.is_absolute():
        path = REPO / path
    assert path.is_file() and os.access(path, os.X_OK), (
        f"colorcam binary not found at {path}: run 'swift build' first or set COLORCAM"
    )
    return str(path)


def header(params: bytes) -> bytes:
    return b"YUV4MPEG2 " + params + b"\n" + FRAME


# (id, input bytes, exit code, fragments the message must contain besides the file name)
CASES = [
    ("truncated-frame", HEADER + b"FRAME\n" + b"\x01" * 10, 65,
     ["byte 35", "frame 0", "truncated", "expected 24", "got 10"]),
    ("truncated-third-frame", HEADER + FRAME + FRAME + b"FRAME\n\x01\x02\x03", 65,
     ["byte 95", "frame 2", "expected 24", "got 3"]),
    ("ends-inside-frame-line", HEADER + FRAME + b"FRA", 65, ["byte 65", "frame 1", "FRAME line"]),
    ("bad-magic", b"YUV4MPEG3 W4 H2 C444\n" + FRAME, 65, ["byte 0", "not a YUV4MPEG2 file"]),
    ("png-bytes", b"\x89PNG\r\n\x1a\n", 65, ["byte 0", "not a YUV4MPEG2 file"]),
    ("missing-width", header(b"H2 F30:1 C444"), 65, ["byte 0", "width"]),
    ("missing-height", header(b"W4 F30:1 C444"), 65, ["byte 0", "height"]),
    ("zero-width", header(b"W0 H2 C444"), 65, ["byte 10", "width"]),
    ("negative-height", header(b"W4 H-2 C444"), 65, ["byte 13", "height", "H-2"]),
    ("non-numeric-width", header(b"Wfour H2 C444"), 65, ["byte 10", "Wfour"]),
    ("huge-width", header(b"W16385 H2 C444"), 65, ["byte 10", "16385", "16384"]),
    ("twenty-digit-height", header(b"W4 H99999999999999999999 C444"), 65, ["byte 13", "exceeds"]),
    ("frame-over-512MiB", header(b"W16384 H16384 C444"), 65, ["byte 0", "805306368"]),
    ("colour-space-10-bit", header(b"W4 H2 C420p10"), 65, ["byte 16", "C420p10", "420jpeg", "mono"]),
    ("colour-space-alpha", header(b"W4 H2 C444alpha"), 65, ["C444alpha", "420jpeg"]),
    ("rate-zero-numerator", header(b"W4 H2 F0:1 C444"), 65, ["byte 16", "F0:1"]),
    ("rate-zero-denominator", header(b"W4 H2 F30:0 C444"), 65, ["byte 16", "F30:0"]),
    ("rate-no-colon", header(b"W4 H2 F30 C444"), 65, ["byte 16", "F30"]),
    ("interlaced-top", header(b"W4 H2 It C444"), 65, ["byte 16", "interlaced"]),
    ("interlaced-bottom", header(b"W4 H2 Ib C444"), 65, ["byte 16", "interlaced"]),
    ("interlaced-mixed", header(b"W4 H2 Im C444"), 65, ["byte 16", "interlaced"]),
    ("garbage-instead-of-frame", HEADER + b"GARBAGE LINE\n" + FRAME, 65,
     ["byte 35", "frame 0", "expected a FRAME line"]),
    ("garbage-after-frame", HEADER + FRAME + b"FRAMES\n", 65, ["byte 65", "frame 1", "expected a FRAME line"]),
    ("payload-too-long", HEADER + FRAME + b"\x55\x55", 65, ["byte 65", "frame 1"]),
    ("header-line-too-long", b"YUV4MPEG2 W4 H2 C444 X" + b"x" * 5000, 65, ["byte 0", "longer than"]),
    ("frame-line-too-long", HEADER + b"FRAME X" + b"y" * 5000, 65, ["byte 35", "frame 0", "longer than"]),
    ("header-without-newline", b"YUV4MPEG2 W4 H2", 65, ["byte 15", "newline"]),
    ("empty-file", b"", 65, ["byte 0", "no YUV4MPEG2 header"]),
    ("bad-timestamp", HEADER + b"FRAME Xts_us=soon\n" + b"\x00" * 24, 65, ["byte 41", "frame 0", "Xts_us"]),
]


def leftovers(directory: pathlib.Path, output_name: str) -> list:
    """Files named like the output or its temporary (`.NAME.tmp-PID`)."""
    return sorted(
        entry.name
        for entry in directory.iterdir()
        if entry.name == output_name or entry.name.startswith("." + output_name + ".tmp")
    )


def run_replay(input_arg: str, output: pathlib.Path, stdin_bytes: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [colorcam_binary(), "replay", input_arg, "--passthrough", "--pace", "asap", "--output", str(output)],
        input=stdin_bytes,
        capture_output=True,
        timeout=60,
        cwd=output.parent,
    )


def check_one_line(result: subprocess.CompletedProcess, expected_code: int, name: str, fragments: list) -> str:
    stderr = result.stderr.decode("utf-8", errors="replace")
    assert result.returncode == expected_code, f"exit {result.returncode}, want {expected_code}; stderr: {stderr!r}"
    assert stderr.endswith("\n") and stderr.count("\n") == 1, f"stderr is not exactly one line: {stderr!r}"
    assert stderr.startswith("colorcam: "), f"stderr does not start with 'colorcam: ': {stderr!r}"
    assert f"{name}:" in stderr, f"stderr does not name {name!r}: {stderr!r}"
    for fragment in fragments:
        assert fragment in stderr, f"{fragment!r} missing from stderr: {stderr!r}"
    return stderr


@pytest.mark.parametrize("case_id,data,code,fragments", CASES, ids=[case[0] for case in CASES])
def test_bad_y4m_file(tmp_path, case_id, data, code, fragments):
    bad = tmp_path / f"{case_id}.y4m"
    bad.write_bytes(data)
    output = tmp_path / "out.y4m"
    result = run_replay(str(bad), output)
    check_one_line(result, code, str(bad), fragments)
    assert leftovers(tmp_path, "out.y4m") == [], "output or temporary file left behind"


def test_missing_file_is_exit_66(tmp_path):
    missing = tmp_path / "no-such-file.y4m"
    output = tmp_path / "out.y4m"
    result = run_replay(str(missing), output)
    check_one_line(result, 66, str(missing), ["No such file"])
    assert leftovers(tmp_path, "out.y4m") == []


def test_empty_stdin_says_no_header(tmp_path):
    output = tmp_path / "out.y4m"
    result = run_replay("-", output, stdin_bytes=b"")
    check_one_line(result, 65, "-", ["byte 0", "no YUV4MPEG2 header"])
    assert leftovers(tmp_path, "out.y4m") == []


def test_truncated_stdin_names_frame(tmp_path):
    output = tmp_path / "out.y4m"
    result = run_replay("-", output, stdin_bytes=HEADER + FRAME + b"FRAME\n" + b"\x00" * 5)
    check_one_line(result, 65, "-", ["byte 65", "frame 1", "expected 24", "got 5"])
    assert leftovers(tmp_path, "out.y4m") == []


def test_folder_without_pngs_is_bad_data(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "notes.txt").write_text("no pictures here\n")
    output = tmp_path / "out.y4m"
    result = run_replay(str(folder), output)
    check_one_line(result, 65, str(folder), ["no .png files"])
    assert leftovers(tmp_path, "out.y4m") == []


def test_undecodable_png_in_folder_names_it(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "0001.png").write_bytes(b"this is not a PNG")
    output = tmp_path / "out.y4m"
    result = run_replay(str(folder), output)
    check_one_line(result, 65, str(folder / "0001.png"), ["frame 0", "PNG"])
    assert leftovers(tmp_path, "out.y4m") == []
