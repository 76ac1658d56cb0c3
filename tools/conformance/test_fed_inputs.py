"""Conformance of fed inputs (a colorizer's hint image and mask): a graph with further inputs, optional (with an
initialiser: its default) or of static shape (default zeros), run by onnxruntime and by `colorcam bench infer
--input … --feed NAME=FILE`; the results must agree as in test_conformance.py (1e-4·max(1, |ort|)), on every
instruction set. Without --feed the engine must give what onnxruntime gives for the defaults; a bad feed is a
usage error (64) or bad data (65) in one line.
"""
import subprocess
import zlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import models
from test_conformance import ISAS, colorcam_bin

H, W = 9, 13


def hint_model(optional):
    """x (1,1,H,W) and hints ab (1,2,H,W) + mask (1,1,H,W) → the colorizer's input recipe, then two convs.
    `optional`: the hints are inputs with all-zero initialisers (as colorcam's export); else plain inputs."""
    b = models.Builder(7)
    scaled = b.op("Mul", ["x", b.const(np.float32(0.02))])
    ab = b.op("Div", ["hint_ab", b.const(np.float32(110.0))])
    cat = b.op("Concat", [scaled, ab, "hint_mask"], axis=1)
    h = b.op("Relu", [b.conv(cat, 4, 8)])
    out = b.conv(h, 8, 2)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, H, W]),
              helper.make_tensor_value_info("hint_ab", TensorProto.FLOAT, [1, 2, H, W]),
              helper.make_tensor_value_info("hint_mask", TensorProto.FLOAT, [1, 1, H, W])]
    inits = list(b.inits)
    if optional:
        inits += [numpy_helper.from_array(np.zeros((1, 2, H, W), np.float32), "hint_ab"),
                  numpy_helper.from_array(np.zeros((1, 1, H, W), np.float32), "hint_mask")]
    graph = helper.make_graph(b.nodes, "g", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", models.OPSET)])
    m.ir_version = 8
    return m


def ort_run(path, feeds):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def colorcam_run(path, x, feeds, tmp, isa=None):
    x.astype("<f4").tofile(tmp / "in.f32")
    args = [colorcam_bin(), "bench", "infer", str(path), "--input", str(tmp / "in.f32"), "--output",
            str(tmp / "out.f32")]
    for name, value in feeds.items():
        value.astype("<f4").tofile(tmp / f"{name}.f32")
        args += ["--feed", f"{name}={tmp / (name + '.f32')}"]
    env = None
    if isa:
        import os
        env = dict(os.environ, COLORCAM_ISA=isa)
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    if proc.returncode == 69 and isa and "lacks" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr.strip()}"
    return np.fromfile(tmp / "out.f32", dtype="<f4")


def agree(got, ref, what):
    ref = ref.reshape(-1).astype(np.float64)
    err = np.abs(got.astype(np.float64) - ref)
    bound = 1e-4 * np.maximum(1.0, np.abs(ref))
    assert got.size == ref.size and np.all(err <= bound), f"{what}: worst |err| {err.max():.3g}"


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("optional", [True, False], ids=["optional", "static"])
def test_fed_hints_match_onnxruntime(optional, isa, tmp_path):
    path = tmp_path / "hints.onnx"
    onnx.save(hint_model(optional), str(path))
    rng = np.random.default_rng(zlib.crc32(b"fed" + bytes([optional])))
    x = rng.uniform(0, 100, (1, 1, H, W)).astype(np.float32)
    mask = (rng.random((1, 1, H, W)) < 0.2).astype(np.float32)
    hint = (rng.uniform(-80, 80, (1, 2, H, W)) * mask).astype(np.float32)
    feeds = {"hint_ab": hint, "hint_mask": mask}
    ref = ort_run(str(path), {"x": x, **feeds})
    agree(colorcam_run(path, x, feeds, tmp_path, isa), ref, f"fed hints ({isa})")
    # Fed with nothing: the defaults (zeros), as onnxruntime without the optional inputs / with zeros.
    zeros = {k: np.zeros_like(v) for k, v in feeds.items()}
    ref0 = ort_run(str(path), {"x": x} if optional else {"x": x, **zeros})
    agree(colorcam_run(path, x, {}, tmp_path, isa) if optional else colorcam_run(path, x, zeros, tmp_path, isa),
          ref0, f"default hints ({isa})")
    assert np.abs(ref - ref0).max() > 1e-3, "the hints must change the output (else the test shows nothing)"


@pytest.mark.parametrize("feed,code,says", [
    ("nosuch=a.f32", 65, "has no input 'nosuch' to feed"),
    ("hint_ab", 64, "--feed wants NAME=VALUES.f32"),
    ("hint_ab=short.f32", 65, "short.f32"),
])
def test_a_bad_feed_is_one_line(feed, code, says, tmp_path):
    path = tmp_path / "hints.onnx"
    onnx.save(hint_model(True), str(path))
    np.zeros(5, "<f4").tofile(tmp_path / "short.f32")
    np.zeros(H * W, "<f4").tofile(tmp_path / "in.f32")
    feed = feed.replace("short.f32", str(tmp_path / "short.f32"))
    proc = subprocess.run([colorcam_bin(), "bench", "infer", str(path), "--input", str(tmp_path / "in.f32"),
                           "--output", str(tmp_path / "out.f32"), "--feed", feed], capture_output=True, text=True)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code and len(lines) == 1 and says in lines[0], (proc.returncode, proc.stderr)
    assert not (tmp_path / "out.f32").exists()
