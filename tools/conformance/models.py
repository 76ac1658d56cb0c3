"""Conformance models for colorcam's inference engine, built with the `onnx` helper API and seeded random weights.

Each case is (name, model, input_shape). `architectures` adds the ECCV16- and SIGGRAPH17-style colorizers and a
small U-Net; `python3 models.py DIR` writes every model to DIR (used by tools/profile).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Builder:
    """Accumulates nodes and initializers for one single-input, single-output graph."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, array, prefix="c"):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def rand(self, *shape, scale=1.0):
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), "w")

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k=3, stride=1, pad=None, dilation=1, group=1, bias=True, **extra):
        kh, kw = (k, k) if isinstance(k, int) else k
        if pad is None:
            pad = [dilation * (kh // 2), dilation * (kw // 2)] * 2
        w = self.rand(cout, cin // group, kh, kw, scale=np.sqrt(2.0 / (cin // group * kh * kw)))
        ins = [x, w] + ([self.rand(cout, scale=0.1)] if bias else [])
        attrs = dict(kernel_shape=[kh, kw], strides=[stride, stride] if isinstance(stride, int) else stride,
                     dilations=[dilation, dilation], group=group)
        if "auto_pad" not in extra:
            attrs["pads"] = pad
        attrs.update(extra)
        return self.op("Conv", ins, **attrs)

    def bn(self, x, c):
        r = self.rng
        return self.op("BatchNormalization", [
            x, self.const((1 + 0.2 * r.standard_normal(c)).astype(np.float32)),
            self.const((0.1 * r.standard_normal(c)).astype(np.float32)),
            self.const((0.1 * r.standard_normal(c)).astype(np.float32)),
            self.const(r.uniform(0.5, 1.5, c).astype(np.float32))], epsilon=1e-5)

    def model(self, x_shape, out, opset=OPSET, input_name="x"):
        graph = helper.make_graph(self.nodes, "g", [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, x_shape)],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8 if opset >= 15 else 7
        return m


def single(name, shape, build, opset=OPSET, seed=0):
    b = Builder(seed)
    out = build(b, "x")
    return name, b.model(list(shape), out, opset), list(shape)


SHAPES = [(1, 1, 1, 1), (1, 3, 3, 7), (1, 13, 17, 31), (2, 3, 5, 4)]


def operator_cases():
    cases = []
    # Conv: kernels, strides, asymmetric pads, dilation, groups, auto_pad, 1-D, bias/no bias.
    for i, (n, c, h, w) in enumerate(SHAPES):
        shape = (n, c, h, w)
        cases.append(single(f"conv3x3_{c}x{h}x{w}", shape, lambda b, x, c=c: b.conv(x, c, 5), seed=i))
        cases.append(single(f"conv1x1_{c}x{h}x{w}", shape, lambda b, x, c=c: b.conv(x, c, 7, k=1, pad=[0] * 4), seed=i))
        cases.append(single(f"conv_s2_asym_{c}x{h}x{w}", shape,
                            lambda b, x, c=c: b.conv(x, c, 4, k=(3, 2), stride=2, pad=[1, 0, 2, 1], bias=False), seed=i))
        cases.append(single(f"conv_dil2_{c}x{h}x{w}", shape, lambda b, x, c=c: b.conv(x, c, 3, dilation=2), seed=i))
        cases.append(single(f"conv_depthwise_{c}x{h}x{w}", shape,
                            lambda b, x, c=c: b.conv(x, c, c, group=c), seed=i))
        for mode in ["SAME_UPPER", "SAME_LOWER", "VALID"]:
            if mode == "VALID" and (h < 3 or w < 3):
                continue
            cases.append(single(f"conv_{mode.lower()}_{c}x{h}x{w}", shape,
                                lambda b, x, c=c, mode=mode: b.conv(x, c, 2, stride=2, auto_pad=mode), seed=i))
    cases.append(single("conv_group3", (1, 6, 9, 11), lambda b, x: b.conv(x, 6, 9, group=3, stride=(1, 2))))
    cases.append(single("conv_5x5_s3", (1, 3, 17, 31), lambda b, x: b.conv(x, 3, 8, k=5, stride=3, pad=[0, 2, 1, 0])))
    cases.append(single("conv1d", (1, 3, 31), lambda b, x: b.op(
        "Conv", [x, b.rand(4, 3, 3), b.rand(4)], kernel_shape=[3], pads=[1, 2], strides=[2])))
    # The tiled direct conv (chosen for few channels): channels 1/3/8/13/16, odd sizes, stride 1/2, asymmetric
    # pads, dilation, a 5×3 kernel, groups, fused activations.
    for i, (c, h, w) in enumerate([(1, 1, 1), (3, 3, 7), (8, 17, 31), (13, 17, 31), (16, 3, 7), (16, 17, 31), (8, 1, 1)]):
        shape = (1, c, h, w)
        tag = f"{c}x{h}x{w}"
        cases.append(single(f"tiled_relu_{tag}", shape, lambda b, x, c=c: b.op("Relu", [b.conv(x, c, 8)]), seed=i))
        cases.append(single(f"tiled_s2_asym_{tag}", shape,
                            lambda b, x, c=c: b.conv(x, c, 16, stride=2, pad=[0, 1, 2, 1]), seed=i))
        cases.append(single(f"tiled_dil2_asym_{tag}", shape, lambda b, x, c=c: b.op("Clip", [
            b.conv(x, c, 13, dilation=2, pad=[2, 1, 2, 3]), b.const(np.float32(-0.3)), b.const(np.float32(0.4))]),
            seed=i))
        if h >= 2 and w >= 2:
            cases.append(single(f"tiled_k5x3_s2_{tag}", shape,
                                lambda b, x, c=c: b.conv(x, c, 12, k=(5, 3), stride=(2, 1), pad=[2, 0, 1, 1]), seed=i))
        cases.append(single(f"tiled_1x1_s2_pad_{tag}", shape,
                            lambda b, x, c=c: b.conv(x, c, 9, k=1, stride=2, pad=[1, 0, 0, 1]), seed=i))
    cases.append(single("tiled_group2", (1, 16, 17, 31), lambda b, x: b.op("Relu", [b.conv(x, 16, 16, group=2)])))
    cases.append(single("tiled_wide_rows", (1, 8, 40, 70), lambda b, x: b.op("Relu", [b.conv(x, 8, 8)])))
    # Winograd F(2x2, 3x3) (chosen for 3x3 stride-1 convs with >= 64 channels in and out): partial tiles at odd
    # sizes, dilation 2 with asymmetric pads, no padding, batch 2 without bias, a fused clip.
    cases.append(single("winograd_relu_64x17x31", (1, 64, 17, 31), lambda b, x: b.op("Relu", [b.conv(x, 64, 72)])))
    cases.append(single("winograd_dil2_asym_64x9x13", (1, 64, 9, 13), lambda b, x: b.op("Clip", [
        b.conv(x, 64, 64, dilation=2, pad=[2, 1, 2, 3]), b.const(np.float32(-0.3)), b.const(np.float32(0.4))])))
    cases.append(single("winograd_valid_80x6x7", (1, 80, 6, 7), lambda b, x: b.conv(x, 80, 64, pad=[0] * 4)))
    cases.append(single("winograd_batch2_64x5x4", (2, 64, 5, 4), lambda b, x: b.conv(x, 64, 96, bias=False)))
    # Pool and resize fast paths: 2×2 stride-2 max pool (even and odd sizes), nearest ×2 upsampling.
    for shape in [(1, 8, 16, 32), (1, 3, 17, 31), (2, 3, 5, 4), (1, 1, 1, 1)]:
        tag = "x".join(map(str, shape))
        if shape[2] >= 2:
            cases.append(single(f"maxpool2x2_{tag}", shape, lambda b, x: b.op("MaxPool", [x], kernel_shape=[2, 2],
                                                                               strides=[2, 2])))
        cases.append(single(f"resize_nearest_x2_{tag}", shape, lambda b, x: b.op(
            "Resize", [x, b.const(np.array([], np.float32)), b.const(np.array([1, 1, 2, 2], np.float32))],
            mode="nearest")))
    # Nearest Resize → 1×1 Conv (colorcam runs the conv first), then a concat skip as in a U-Net decoder.
    cases.append(single("resize_conv1x1_concat", (1, 13, 3, 7), lambda b, x: b.op("Concat", [b.op("Relu", [b.conv(
        b.op("Resize", [x, b.const(np.array([], np.float32)), b.const(np.array([1, 1, 2, 3], np.float32))],
             mode="nearest"), 13, 6, k=1, pad=[0] * 4)]), b.op("Resize", [x, b.const(np.array([], np.float32)),
                                                                         b.const(np.array([1, 1, 2, 3], np.float32))],
                                                                 mode="nearest")], axis=1)))
    # Fusions: Conv → BN / Mul / Add / Relu / LeakyRelu / Clip.
    cases.append(single("conv_bn_relu", (1, 13, 17, 31), lambda b, x: b.op("Relu", [b.bn(b.conv(x, 13, 16), 16)])))
    cases.append(single("conv_mul_add_leaky", (1, 3, 17, 31), lambda b, x: b.op(
        "LeakyRelu", [b.op("Add", [b.op("Mul", [b.conv(x, 3, 8, bias=False), b.rand(8, 1, 1)]), b.rand(1, 8, 1, 1)])],
        alpha=0.2)))
    cases.append(single("conv_clip", (1, 3, 7, 9), lambda b, x: b.op(
        "Clip", [b.conv(x, 3, 4), b.const(np.float32(-0.5)), b.const(np.float32(0.7))])))
    cases.append(single("conv_bn_used_twice", (1, 3, 7, 9), lambda b, x: (lambda y: b.op("Add", [y, b.bn(y, 4)]))(b.conv(x, 3, 4))))
    # ConvTranspose.
    for i, shape in enumerate([(1, 1, 1, 1), (1, 3, 3, 7), (1, 13, 17, 31)]):
        c = shape[1]
        tag = "x".join(map(str, shape[1:]))
        cases.append(single(f"convT_k4s2p1_{tag}", shape, lambda b, x, c=c: b.op(
            "ConvTranspose", [x, b.rand(c, 5, 4, 4, scale=0.3), b.rand(5)], kernel_shape=[4, 4], strides=[2, 2],
            pads=[1, 1, 1, 1]), seed=i))
        cases.append(single(f"convT_k3_outpad_dil_{tag}", shape, lambda b, x, c=c: b.op(
            "ConvTranspose", [x, b.rand(c, 2, 3, 3, scale=0.3)], kernel_shape=[3, 3], strides=[2, 3],
            pads=[0, 1, 1, 0], output_padding=[1, 0], dilations=[2, 1]), seed=i))
    cases.append(single("convT_group", (1, 6, 5, 7), lambda b, x: b.op(
        "ConvTranspose", [x, b.rand(6, 2, 3, 3, scale=0.3), b.rand(6)], kernel_shape=[3, 3], group=3, strides=[2, 2])))
    cases.append(single("convT_output_shape", (1, 3, 5, 7), lambda b, x: b.op(
        "ConvTranspose", [x, b.rand(3, 2, 3, 3, scale=0.3)], kernel_shape=[3, 3], strides=[2, 2], output_shape=[10, 14])))
    # BatchNormalization and the unary ops.
    for shape in SHAPES:
        tag = "x".join(map(str, shape))
        cases.append(single(f"bn_{tag}", shape, lambda b, x, c=shape[1]: b.bn(x, c)))
        cases.append(single(f"unary_{tag}", shape, lambda b, x: b.op("Tanh", [b.op("Sigmoid", [b.op(
            "LeakyRelu", [b.op("Relu", [b.op("Sub", [x, b.const(np.float32(0.3))])]) if False else x], alpha=0.1)])])))
    cases.append(single("relu", (1, 3, 3, 7), lambda b, x: b.op("Relu", [x])))
    cases.append(single("clip_min_only", (1, 3, 3, 7), lambda b, x: b.op("Clip", [x, b.const(np.float32(-0.2))])))
    cases.append(single("clip_opset11_both", (1, 3, 3, 7), lambda b, x: b.op(
        "Clip", [x, b.const(np.float32(-0.2)), b.const(np.float32(0.4))]), opset=11))
    cases.append(single("identity", (1, 3, 3, 7), lambda b, x: b.op("Identity", [b.op("Relu", [x])])))
    # Broadcasting binary ops (constant and run-time operands).
    for op in ["Add", "Sub", "Mul", "Div"]:
        for other in [(13, 1, 1), (31,), (), (1, 13, 17, 31)]:
            def build(b, x, op=op, other=other):
                v = b.rng.uniform(0.5, 1.5, other).astype(np.float32)
                return b.op(op, [x, b.const(v)])
            cases.append(single(f"{op.lower()}_const_{'x'.join(map(str, other)) or 'scalar'}", (1, 13, 17, 31), build))
        cases.append(single(f"{op.lower()}_runtime_bcast", (2, 3, 7, 5), lambda b, x, op=op: b.op(op, [
            b.op("Slice", [x, b.const(np.array([0], np.int64)), b.const(np.array([1], np.int64)),
                           b.const(np.array([2], np.int64))]), b.op("Sigmoid", [x])])))
    # Layout ops.
    cases.append(single("concat_axis1", (1, 3, 7, 5), lambda b, x: b.op("Concat", [x, b.op("Relu", [x]), x], axis=1)))
    cases.append(single("concat_axis_neg1", (1, 3, 7, 5), lambda b, x: b.op("Concat", [x, b.op("Tanh", [x])], axis=-1)))
    cases.append(single("slice_steps", (1, 13, 17, 31), lambda b, x: b.op("Slice", [
        x, b.const(np.array([0, 16, 1], np.int64)), b.const(np.array([100, -100, 13], np.int64)),
        b.const(np.array([2, 3, 1], np.int64)), b.const(np.array([2, -3, 4], np.int64))])))
    cases.append(single("slice_neg_start", (1, 3, 17, 31), lambda b, x: b.op("Slice", [
        x, b.const(np.array([-5], np.int64)), b.const(np.array([-1], np.int64)), b.const(np.array([-1], np.int64))])))
    cases.append(single("reshape_0_neg1", (2, 3, 5, 4), lambda b, x: b.op("Reshape", [x, b.const(np.array([0, -1, 4], np.int64))])))
    cases.append(single("transpose", (2, 3, 5, 4), lambda b, x: b.op("Transpose", [x], perm=[0, 2, 3, 1])))
    cases.append(single("flatten_axis2", (2, 3, 5, 4), lambda b, x: b.op("Flatten", [x], axis=2)))
    cases.append(single("gemm_transB_C", (2, 3, 5, 4), lambda b, x: b.op(
        "Gemm", [b.op("Flatten", [x]), b.rand(7, 60), b.rand(7)], transB=1, alpha=0.5, beta=2.0)))
    cases.append(single("gemm_transA", (60, 2), lambda b, x: b.op("Gemm", [x, b.rand(60, 7), b.rand(2, 1)], transA=1)))
    cases.append(single("matmul_4d", (1, 3, 7, 5), lambda b, x: b.op("MatMul", [x, b.rand(5, 4)])))
    cases.append(single("matmul_batched", (2, 3, 7, 5), lambda b, x: b.op("MatMul", [x, b.op("Transpose", [x], perm=[0, 1, 3, 2])])))
    # Pools.
    for shape in [(1, 1, 1, 1), (1, 3, 3, 7), (1, 13, 17, 31)]:
        tag = "x".join(map(str, shape[1:]))
        cases.append(single(f"maxpool_k3s2p1_{tag}", shape, lambda b, x: b.op(
            "MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])))
        cases.append(single(f"avgpool_incl_{tag}", shape, lambda b, x: b.op(
            "AveragePool", [x], kernel_shape=[2, 2], strides=[1, 2], pads=[1, 0, 0, 1], count_include_pad=1)))
        cases.append(single(f"avgpool_excl_{tag}", shape, lambda b, x: b.op(
            "AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])))
        cases.append(single(f"gap_{tag}", shape, lambda b, x: b.op("GlobalAveragePool", [x])))
    cases.append(single("maxpool_ceil_dil", (1, 3, 17, 31), lambda b, x: b.op(
        "MaxPool", [x], kernel_shape=[3, 2], strides=[2, 3], dilations=[2, 1], ceil_mode=1)))
    cases.append(single("avgpool_ceil", (1, 3, 17, 31), lambda b, x: b.op(
        "AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)))
    cases.append(single("maxpool_same_upper", (1, 3, 17, 31), lambda b, x: b.op(
        "MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")))
    # Resize / Upsample.
    empty = lambda b: b.const(np.array([], np.float32))
    for mode in ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]:
        for shape in [(1, 1, 1, 1), (1, 3, 3, 7), (1, 13, 17, 31)]:
            tag = "x".join(map(str, shape[1:]))
            cases.append(single(f"resize_linear_{mode}_{tag}", shape, lambda b, x, mode=mode: b.op(
                "Resize", [x, empty(b), b.const(np.array([1, 1, 4, 2.5], np.float32))], mode="linear",
                coordinate_transformation_mode=mode)))
        cases.append(single(f"resize_nearest_{mode}", (1, 3, 5, 7), lambda b, x, mode=mode: b.op(
            "Resize", [x, empty(b), b.const(np.array([1, 1, 2, 0.6], np.float32))], mode="nearest",
            coordinate_transformation_mode=mode)))
    for nearest in ["round_prefer_ceil", "floor", "ceil"]:
        cases.append(single(f"resize_nearest_{nearest}", (1, 3, 5, 7), lambda b, x, nearest=nearest: b.op(
            "Resize", [x, empty(b), b.const(np.array([1, 1, 3, 1.5], np.float32))], mode="nearest",
            nearest_mode=nearest)))
    cases.append(single("resize_linear_sizes", (1, 3, 5, 7), lambda b, x: b.op(
        "Resize", [x, empty(b), empty(b), b.const(np.array([1, 3, 9, 20], np.int64))], mode="linear")))
    cases.append(single("upsample_opset9", (1, 3, 5, 7), lambda b, x: b.op(
        "Upsample", [x, b.const(np.array([1, 1, 2, 3], np.float32))], mode="nearest"), opset=9))
    # Softmax, Pad, Constant, folded shape subgraph.
    cases.append(single("softmax_axis1", (1, 13, 17, 31), lambda b, x: b.op("Softmax", [x], axis=1)))
    cases.append(single("softmax_default", (1, 13, 17, 31), lambda b, x: b.op("Softmax", [x])))
    cases.append(single("softmax_opset11_axis1", (1, 3, 5, 7), lambda b, x: b.op("Softmax", [x], axis=1), opset=11))
    for mode in ["constant", "reflect", "edge"]:
        cases.append(single(f"pad_{mode}", (1, 3, 5, 7), lambda b, x, mode=mode: b.op(
            "Pad", [x, b.const(np.array([0, 0, 2, 1, 0, 1, 1, 3], np.int64))] +
                   ([b.const(np.float32(0.25))] if mode == "constant" else []), mode=mode)))

    def constant_case(b, x):
        c = b.op("Constant", [], value=numpy_helper.from_array(np.float32([1.5, -2, 0.25]).reshape(3, 1, 1)))
        return b.op("Mul", [x, c])
    cases.append(single("constant", (1, 3, 5, 7), constant_case))

    def shape_subgraph(b, x):
        s = b.op("Shape", [x])
        n = b.op("Gather", [s, b.const(np.array(0, np.int64))], axis=0)
        c = b.op("Gather", [s, b.const(np.array(1, np.int64))], axis=0)
        h = b.op("Gather", [s, b.const(np.array(2, np.int64))], axis=0)
        hw = b.op("Mul", [h, b.op("Gather", [s, b.const(np.array(3, np.int64))], axis=0)])
        parts = [b.op("Unsqueeze", [v, b.const(np.array([0], np.int64))]) for v in (n, c, hw)]
        return b.op("Softmax", [b.op("Reshape", [x, b.op("Concat", parts, axis=0)])], axis=-1)
    cases.append(single("shape_subgraph_folded", (1, 3, 5, 7), shape_subgraph))
    return cases


def eccv16(size=256, seed=1):
    """Zhang et al. ECCV16 architecture with random weights: 1×H×W lightness → 2×H×W ab."""
    b = Builder(seed)
    x = b.op("Div", [b.op("Sub", ["l", b.const(np.float32(50))]), b.const(np.float32(100))])
    relu = lambda y: b.op("Relu", [y])
    blocks = [(1, 64, 2, 2, 1), (64, 128, 2, 2, 1), (128, 256, 3, 2, 1), (256, 512, 3, 1, 1), (512, 512, 3, 1, 2),
              (512, 512, 3, 1, 2), (512, 512, 3, 1, 1)]
    for cin, cout, n, last_stride, dil in blocks:
        for i in range(n):
            x = relu(b.conv(x, cin if i == 0 else cout, cout, stride=last_stride if i == n - 1 else 1, dilation=dil))
        x = b.bn(x, cout)
    x = relu(b.op("ConvTranspose", [x, b.rand(512, 256, 4, 4, scale=np.sqrt(2 / (512 * 4))), b.rand(256, scale=0.1)],
                  kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = relu(b.conv(x, 256, 256))
    x = relu(b.conv(x, 256, 256))
    x = b.conv(x, 256, 313, k=1, pad=[0] * 4)
    x = b.op("Softmax", [b.op("Mul", [x, b.const(np.float32(2.606))])], axis=1)
    x = b.conv(x, 313, 2, k=1, pad=[0] * 4, bias=False)
    x = b.op("Mul", [x, b.const(np.float32(110))])
    x = b.op("Resize", [x, b.const(np.array([], np.float32)), b.const(np.array([1, 1, 4, 4], np.float32))],
             mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
    return "eccv16_256", b.model([1, 1, size, size], x, input_name="l"), [1, 1, size, size]


def siggraph17(size=256, seed=2):
    """SIGGRAPH17-style architecture: Slice step-2 downsampling, Concat skips, LeakyRelu, Tanh; 4 → 2 channels."""
    b = Builder(seed)
    relu = lambda y: b.op("Relu", [y])
    def block(x, cin, cout, n, dil=1):
        for i in range(n):
            x = relu(b.conv(x, cin if i == 0 else cout, cout, dilation=dil))
        return b.bn(x, cout)
    def half(x):
        return b.op("Slice", [x, b.const(np.array([0, 0], np.int64)), b.const(np.array([2**31, 2**31], np.int64)),
                              b.const(np.array([2, 3], np.int64)), b.const(np.array([2, 2], np.int64))])
    def up(x, cin, cout):
        return b.op("ConvTranspose", [x, b.rand(cin, cout, 4, 4, scale=np.sqrt(2 / (cin * 4))), b.rand(cout, scale=0.1)],
                    kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
    c1 = block("x", 4, 64, 2)
    c2 = block(half(c1), 64, 128, 2)
    c3 = block(half(c2), 128, 256, 3)
    c4 = block(half(c3), 256, 512, 3)
    c5 = block(c4, 512, 512, 3, dil=2)
    c6 = block(c5, 512, 512, 3, dil=2)
    c7 = block(c6, 512, 512, 3)
    u8 = b.op("Concat", [up(c7, 512, 256), b.conv(c3, 256, 256)], axis=1)
    c8 = b.bn(relu(b.conv(relu(b.conv(u8, 512, 256)), 256, 256)), 256)
    u9 = b.op("Concat", [up(c8, 256, 128), b.conv(c2, 128, 128)], axis=1)
    c9 = b.bn(relu(b.conv(u9, 256, 128)), 128)
    u10 = b.op("Concat", [up(c9, 128, 128), b.conv(c1, 64, 128)], axis=1)
    c10 = b.op("LeakyRelu", [b.conv(u10, 256, 128)], alpha=0.2)
    out = b.op("Tanh", [b.conv(c10, 128, 2, k=1, pad=[0] * 4)])
    return "siggraph17_256", b.model([1, 4, size, size], out), [1, 4, size, size]


def unet(size=256, seed=3, width=8):
    """A small U-Net (~1.5 GFLOP at 256²): MaxPool down, Resize up, Concat skips."""
    b = Builder(seed)
    relu = lambda y: b.op("Relu", [y])
    def double(x, cin, cout):
        return relu(b.bn(b.conv(relu(b.bn(b.conv(x, cin, cout), cout)), cout, cout), cout))
    chans = [width, 2 * width, 4 * width, 8 * width]
    skips, x, cin = [], "x", 1
    for c in chans:
        x = double(x, cin, c)
        skips.append(x)
        x = b.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
        cin = c
    x = double(x, cin, 16 * width)
    cin = 16 * width
    for c, skip in zip(reversed(chans), reversed(skips)):
        x = b.op("Resize", [x, b.const(np.array([], np.float32)), b.const(np.array([1, 1, 2, 2], np.float32))],
                 mode="nearest")
        x = double(b.op("Concat", [b.conv(x, cin, c, k=1, pad=[0] * 4), skip], axis=1), 2 * c, c)
        cin = c
    out = b.conv(x, cin, 2, k=1, pad=[0] * 4)
    return "unet_256", b.model([1, 1, size, size], out), [1, 1, size, size]


def architectures():
    return [eccv16(), siggraph17(), unet()]


def count(model):
    """(parameters, multiply-add FLOPs×2) of Conv/ConvTranspose/Gemm/MatMul via onnx shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in
              list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    inits = {t.name: list(t.dims) for t in model.graph.initializer}
    params = sum(int(np.prod(d)) for d in inits.values())
    flops = 0
    for n in model.graph.node:
        if n.op_type == "Conv":
            w = inits[n.input[1]]
            flops += 2 * int(np.prod(shapes[n.output[0]])) * int(np.prod(w[1:]))
        elif n.op_type == "ConvTranspose":
            w = inits[n.input[1]]
            flops += 2 * int(np.prod(shapes[n.input[0]])) * int(np.prod(w[1:]))
    return params, flops


if __name__ == "__main__":
    out_dir = sys.argv[1]
    import os
    os.makedirs(out_dir, exist_ok=True)
    for name, model, shape in architectures():
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))
        p, f = count(model)
        print(f"{name}: input {shape}, {p / 1e6:.1f} M parameters, {f / 1e9:.2f} GFLOP (multiply-add = 2)")
