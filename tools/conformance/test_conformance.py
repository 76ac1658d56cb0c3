"""Conformance: every model in models.py runs in onnxruntime and in `colorcam bench infer --input/--output`;
the results must agree to max |colorcam − ort| ≤ 1e-4·max(1, |ort|) elementwise. Small models also run colorcam's
reference (naive) kernels. Bad models must fail with exit 65 and a one-line message.

Needs: pip onnx onnxruntime numpy pytest; a built colorcam (COLORCAM_BIN, else .build/release or .build/debug).
"""
import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import models

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def colorcam_bin():
    for candidate in [os.environ.get("COLORCAM_BIN"), f"{ROOT}/.build/release/colorcam", f"{ROOT}/.build/debug/colorcam"]:
        if candidate and os.path.exists(candidate):
            return candidate
    pytest.fail("no colorcam binary: run `swift build -c release` (or set COLORCAM_BIN)")


def ort_run(path, x):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def colorcam_run(path, x, tmp, mode="fast"):
    inp, out = os.path.join(tmp, "in.f32"), os.path.join(tmp, "out.f32")
    x.astype("<f4").tofile(inp)
    shape = "x".join(map(str, x.shape))
    proc = subprocess.run([colorcam_bin(), "bench", "infer", path, "--shape", shape, "--mode", mode,
                           "--input", inp, "--output", out], capture_output=True, text=True)
    assert proc.returncode == 0, f"colorcam exit {proc.returncode}: {proc.stderr.strip()}"
    return np.fromfile(out, dtype="<f4")


def check(name, model, shape, tmp_path, modes):
    path = str(tmp_path / f"{name}.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    x = rng.standard_normal(shape).astype(np.float32)
    if name.startswith("eccv16"):
        x = rng.uniform(0, 100, shape).astype(np.float32)
    ref = ort_run(path, x)
    for mode in modes:
        got = colorcam_run(path, x, str(tmp_path), mode)
        assert got.size == ref.size, f"{name} ({mode}): {got.size} values, onnxruntime gives {ref.shape}"
        ref_flat = ref.reshape(-1).astype(np.float64)
        err = np.abs(got.astype(np.float64) - ref_flat)
        bound = 1e-4 * np.maximum(1.0, np.abs(ref_flat))
        worst = int(np.argmax(err / bound))
        assert np.all(err <= bound), (f"{name} ({mode}): element {worst} colorcam {got[worst]} vs onnxruntime "
                                      f"{ref_flat[worst]} (|err| {err[worst]:.3g} > {bound[worst]:.3g})")


CASES = models.operator_cases()


@pytest.mark.parametrize("name,model,shape", CASES, ids=[c[0] for c in CASES])
def test_operator(name, model, shape, tmp_path):
    check(name, model, shape, tmp_path, ["fast", "reference"])


ARCH = [models.eccv16, models.siggraph17, models.unet]


@pytest.mark.parametrize("build", ARCH, ids=[f.__name__ for f in ARCH])
def test_architecture(build, tmp_path):
    name, model, shape = build()
    check(name, model, shape, tmp_path, ["fast"])


def test_eccv16_size():
    params, flops = models.count(models.eccv16()[1])
    assert 31e6 < params < 33e6 and 83e9 < flops < 84e9, (params, flops)


def bad_models(tmp):
    name, good, shape = models.single("conv", (1, 3, 5, 7), lambda b, x: b.conv(x, 3, 4))
    data = good.SerializeToString()
    out = {"truncated": data[: len(data) // 2], "wrong_wire_type": bytes([0x3D]) + data[1:]}
    huge = onnx.TensorProto(name="huge", data_type=1, dims=[1 << 29])
    huge.raw_data = b"\0" * 16
    m = onnx.ModelProto(); m.CopyFrom(good); m.graph.initializer.append(huge)
    out["tensor_claims_2GB"] = m.SerializeToString()
    m = onnx.ModelProto(); m.CopyFrom(good); del m.graph.initializer[0]
    out["missing_initializer"] = m.SerializeToString()
    m = onnx.ModelProto(); m.CopyFrom(good)
    m.graph.node.append(onnx.helper.make_node("Relu", ["b"], ["a"]))
    m.graph.node.append(onnx.helper.make_node("Relu", ["a"], ["b"]))
    out["cyclic"] = m.SerializeToString()
    m = onnx.ModelProto(); m.CopyFrom(good)
    m.graph.output[0].CopyFrom(onnx.helper.make_tensor_value_info(m.graph.output[0].name, 1, [1, 4, 9, 9]))
    out["shape_mismatch"] = m.SerializeToString()
    m = onnx.ModelProto(); m.CopyFrom(good)
    m.graph.node.append(onnx.helper.make_node("Einsum", [m.graph.output[0].name], ["z"], equation="ii"))
    m.graph.output[0].name = "z"
    out["unknown_op"] = m.SerializeToString()
    return out


@pytest.mark.parametrize("kind", list(bad_models(None).keys()))
def test_bad_model(kind, tmp_path):
    path = tmp_path / f"{kind}.onnx"
    path.write_bytes(bad_models(tmp_path)[kind])
    proc = subprocess.run([colorcam_bin(), "bench", "infer", str(path), "--runs", "1"], capture_output=True, text=True)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 65, f"{kind}: exit {proc.returncode}, stderr {proc.stderr!r}"
    assert len(lines) == 1 and str(path) in lines[0], f"{kind}: stderr {proc.stderr!r}"
