"""--detect-model and --detector (the detector's learned print segmenter) on every command that builds a detector:
'none' and --detector classic are the classic detector; a missing model is exit 66, a file that is not a segmenter
exit 65, a mode that needs a model without one exit 64, each with one line naming the problem; a working model
(written here as ONNX bytes: a 1x1 convolution + sigmoid) runs, and bench detect reports its time."""
import json
import struct

import pytest

from conftest import ROOT, run


def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field (bytes, strings, messages)."""
    payload = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int(number, value):
    return _varint(number << 3) + _varint(value)


def segmenter_onnx(out_channels=2):
    """ONNX bytes: frame [1,3,h,w] -> Conv 1x1 (3 -> out_channels) -> Sigmoid -> maps [1,out,h,w] (opset 17).
    Channel 0 rises with luma (a bright print on a dark table), channel 1 is near 0."""
    weights = [0.0] * (3 * out_channels)
    weights[0] = 60.0
    bias = [19.4] + [-8.0] * (out_channels - 1)

    def tensor(name, dims, values):
        return (b"".join(_int(1, d) for d in dims) + _int(2, 1) + _field(8, name)
                + _field(9, struct.pack(f"<{len(values)}f", *values)))

    def value_info(name, channels):
        dims = (_field(1, _int(1, 1)) + _field(1, _int(1, channels)) + _field(1, _field(2, "h"))
                + _field(1, _field(2, "w")))
        return _field(1, name) + _field(2, _field(1, _int(1, 1) + _field(2, dims)))

    conv = _field(1, "frame") + _field(1, "w") + _field(1, "b") + _field(2, "z") + _field(3, "conv") + _field(4, "Conv")
    sigmoid = _field(1, "z") + _field(2, "maps") + _field(3, "sigmoid") + _field(4, "Sigmoid")
    graph = (_field(1, conv) + _field(1, sigmoid) + _field(2, "segmenter")
             + _field(5, tensor("w", [out_channels, 3, 1, 1], weights)) + _field(5, tensor("b", [out_channels], bias))
             + _field(11, value_info("frame", 3)) + _field(12, value_info("maps", out_channels)))
    return _int(1, 8) + _field(7, graph) + _field(8, _field(1, "") + _int(2, 17))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, ffmpeg):
    """A 320x240 PNG and a 6-frame clip (a light square on a dark table), a working segmenter bundle and bare file,
    a garbage .onnx, a bundle of another kind and a 3-map model."""
    d = tmp_path_factory.mktemp("detect-model")
    lavfi = "color=c=0x141414:size=320x240,drawbox=x=70:y=50:w=180:h=130:color=0xc8c8c8:t=fill"
    run(ffmpeg, "-v", "error", "-f", "lavfi", "-i", lavfi, "-frames:v", "1", "-pix_fmt", "rgb24", "-y",
        d / "print.png")
    run(ffmpeg, "-v", "error", "-f", "lavfi", "-i", lavfi + ",format=yuv420p", "-frames:v", "6", "-f",
        "yuv4mpegpipe", "-y", d / "print.y4m")
    bundle = d / "bundle"
    bundle.mkdir()
    (bundle / "model.onnx").write_bytes(segmenter_onnx())
    (bundle / "manifest.json").write_text(json.dumps({
        "kind": "detect-segmenter", "input": "frame", "output": "maps", "cell_px_per_coarse_factor": 2,
        "multiple": 8, "trained_on": {"scenes": 1000}}))
    (d / "bare.onnx").write_bytes(segmenter_onnx())
    (d / "garbage.onnx").write_bytes(b"this is not a model\x00\xff")
    (d / "three.onnx").write_bytes(segmenter_onnx(out_channels=3))
    other = d / "colorizer-bundle"
    other.mkdir()
    (other / "model.onnx").write_bytes(segmenter_onnx())
    (other / "manifest.json").write_text(json.dumps({"kind": "colorizer"}))
    return d


def detect_json(colorcam, path, *extra):
    return [json.loads(line) for line in run(colorcam, "detect", path, "--json", *extra).stdout.splitlines()]


def test_none_is_the_classic_detector(colorcam, inputs):
    for path in (inputs / "print.png", inputs / "print.y4m"):
        classic = detect_json(colorcam, path, "--detector", "classic")
        assert detect_json(colorcam, path, "--detect-model", "none") == classic
        assert detect_json(colorcam, path, "--detect-model", "none", "--detector", "classic") == classic
        # classic never loads the model: even a broken one is not read.
        assert detect_json(colorcam, path, "--detect-model", inputs / "garbage.onnx", "--detector", "classic") == classic
    assert len(classic[-1]["detections"]) == 1, classic


@pytest.mark.parametrize("mode", ["learned", "both"])
@pytest.mark.parametrize("model", ["bundle", "bare.onnx"])
def test_a_working_model_finds_the_print(colorcam, inputs, mode, model):
    frames = detect_json(colorcam, inputs / "print.png", "--detect-model", inputs / model, "--detector", mode)
    assert len(frames) == 1 and len(frames[0]["detections"]) == 1, frames
    corners = frames[0]["detections"][0]["corners"]
    truth = [[70, 50], [250, 50], [250, 180], [70, 180]]
    assert max(abs(a - b) for c, t in zip(corners, truth) for a, b in zip(c, t)) < 1.5, corners
    clip = detect_json(colorcam, inputs / "print.y4m", "--detect-model", inputs / model, "--detector", mode)
    assert len(clip) == 6 and all(len(f["detections"]) <= 1 for f in clip)


COMMANDS = {
    "detect": lambda d: ["detect", d / "print.png"],
    "detect-clip": lambda d: ["detect", d / "print.y4m"],
    "bench detect": lambda d: ["bench", "detect", d / "print.y4m", "--repeat", "1"],
    "replay": lambda d: ["replay", d / "print.y4m", "--pace", "asap", "--output", d / "out.y4m"],
    "colorize": lambda d: ["colorize", d / "print.png", d / "out.png"],
}


def one_line_error(proc):
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_model_errors_have_exit_codes_and_name_the_file(colorcam, inputs, command):
    args = COMMANDS[command](inputs)
    missing = inputs / "no-such-model"
    r = run(colorcam, *args, "--detect-model", missing, check=False)
    assert r.returncode == 66 and str(missing) in one_line_error(r), (r.returncode, r.stderr)
    for bad in ("garbage.onnx", "three.onnx", "colorizer-bundle"):
        r = run(colorcam, *args, "--detect-model", inputs / bad, check=False)
        assert r.returncode == 65 and str(inputs / bad) in one_line_error(r), (bad, r.returncode, r.stderr)
    r = run(colorcam, *args, "--detect-model", "none", "--detector", "learned", check=False)
    assert r.returncode == 64 and "--detector learned" in one_line_error(r), r.stderr
    r = run(colorcam, *args, "--detector", "fancy", check=False)
    assert r.returncode == 64 and "learned, classic or both" in one_line_error(r), r.stderr


def test_bench_detect_reports_the_segmenter_only_when_it_runs(colorcam, inputs):
    clip = inputs / "print.y4m"
    plain = json.loads(run(colorcam, "bench", "detect", clip, "--repeat", "1", "--json", "--detect-model",
                           "none").stdout)
    assert not any(key.startswith("cnn_") for key in plain), plain
    timed = json.loads(run(colorcam, "bench", "detect", clip, "--repeat", "1", "--json", "--detect-model",
                           inputs / "bundle").stdout)
    assert set(plain) < set(timed)
    assert timed["cnn_runs"] >= 2 and 0 < timed["cnn_p50_ms"] <= timed["max_ms"] and timed["cnn_cpu_p50_ms"] > 0
    text = run(colorcam, "bench", "detect", clip, "--repeat", "1", "--detect-model", inputs / "bundle").stdout
    lines = text.splitlines()
    assert len(lines) == 2 and lines[0].startswith("bench detect: ") and "segmenter" in lines[1], text


@pytest.mark.parametrize("command", [["detect"], ["bench"], ["replay"], ["live"], ["colorize"]])
def test_help_names_the_flags(colorcam, command):
    text = run(colorcam, *command, "--help").stdout
    assert "--detect-model DIR|FILE.onnx|none" in text and "--detector learned|classic|both" in text


def test_doctor_names_the_detect_model(colorcam):
    lines = [line for line in run(colorcam, "doctor").stdout.splitlines() if line.startswith("detect ")]
    assert len(lines) == 1
    default = ROOT / "Models/detect-default/model.onnx"
    assert (str(default) in lines[0] or "detect-default/model.onnx" in lines[0]) if default.exists() \
        else "classic" in lines[0], lines
