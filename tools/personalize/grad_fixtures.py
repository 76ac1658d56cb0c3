"""Gradient-conformance fixtures for colorcam's trainer (Sources/Infer/Train), made by PyTorch.

    python3 tools/personalize/grad_fixtures.py --out Tests/InferTests/Fixtures/grad

For each small graph below (the ops a colorizer's later layers use: Conv k x k with stride / dilation / groups and
1x1, ConvTranspose, ReLU / LeakyReLU / Tanh / Sigmoid, linear and nearest Resize, Concat, Add / Mul / Div,
BatchNormalization, Softmax and a fixed decode conv), writes NAME.onnx (opset 17) and
NAME.json: the input, a target, the smooth-L1 loss (beta 1, mean) PyTorch computes, and the loss's gradient with
respect to every parameter (BatchNorm statistics stay frozen), keyed by its ONNX initializer name. The Swift test (Tests/InferTests/TrainGradientTests.swift)
computes the same gradients and compares (max relative error <= 1e-3), and checks them by finite differences.
Deterministic (seeded); needs torch and onnx at fixture time only, never at test time.
"""
import argparse
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvStack(nn.Module):
    """3x3 stride 2 pad 1 -> ReLU -> 3x3 dilation 2 groups 2 -> LeakyReLU -> 1x1 -> Tanh * 3."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.b = nn.Conv2d(8, 6, 3, padding=2, dilation=2, groups=2)
        self.c = nn.Conv2d(6, 2, 1)

    def forward(self, x):
        x = F.relu(self.a(x))
        x = F.leaky_relu(self.b(x), 0.1)
        return torch.tanh(self.c(x)) * 3.0


class UpMerge(nn.Module):
    """A U-Net decoder step: 1x1 -> linear x2 (half-pixel) + skip conv -> 3x3 -> ReLU -> ConvTranspose 4x4 s2 ->
    Sigmoid; nearest x2 of a second branch concatenated."""

    def __init__(self):
        super().__init__()
        self.p = nn.Conv2d(4, 4, 1)
        self.s = nn.Conv2d(4, 4, 1)
        self.d = nn.Conv2d(8, 4, 3, padding=1)
        self.t = nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.bn.running_mean.uniform_(-0.2, 0.2)
        self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        low = F.avg_pool2d(x, 2)  # frozen (no parameters): computed by the trainer from the input
        up = F.interpolate(self.p(low), scale_factor=2, mode="bilinear", align_corners=False)
        near = F.interpolate(low, scale_factor=2, mode="nearest")
        merged = torch.cat([up + self.s(x), near * 0.5], dim=1)
        y = F.relu(self.d(merged))
        return torch.sigmoid(self.bn(self.t(y)))


class SoftmaxDecode(nn.Module):
    """A colorizer's mixed head: logits / T -> Softmax over bins -> fixed decode conv -> linear x4, plus a
    regression branch tanh * 110 -> linear x2, mixed 0.6 / 0.4."""

    def __init__(self):
        super().__init__()
        self.cls = nn.Conv2d(6, 12, 1)
        self.reg = nn.Conv2d(6, 2, 1)
        self.decode = nn.Conv2d(12, 2, 1, bias=False)
        with torch.no_grad():
            self.decode.weight.copy_(torch.randn(2, 12, 1, 1) * 40)

    def forward(self, x):
        half = F.avg_pool2d(x, 2)
        p = torch.softmax(self.cls(half) / 0.38, dim=1)
        cls = F.interpolate(self.decode(p), scale_factor=4, mode="bilinear", align_corners=False)
        reg = F.interpolate(torch.tanh(self.reg(x)) * 110, scale_factor=2, mode="bilinear", align_corners=False)
        return cls * 0.6 + reg * 0.4


GRAPHS = {
    "conv_stack": (ConvStack, (1, 3, 12, 10)),
    "up_merge": (UpMerge, (1, 4, 8, 8)),
    "softmax_decode": (SoftmaxDecode, (1, 6, 8, 8)),
}


def make(name, cls, shape, out_dir, seed):
    torch.manual_seed(seed)
    model = cls().eval()
    x = torch.randn(*shape)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, (x,), path, opset_version=17, input_names=["x"], output_names=["y"],
                      do_constant_folding=False, dynamo=False,
                      export_params=True, keep_initializers_as_inputs=False)
    import onnx
    graph = onnx.load(path).graph
    init_names = [t.name for t in graph.initializer if t.data_type == onnx.TensorProto.FLOAT]
    # map ONNX initializer names back to the module's tensors (parameters and buffers)
    tensors = dict(model.named_parameters())  # buffers (BatchNorm statistics) stay frozen
    y = model(x)
    target = torch.randn_like(y) * y.detach().abs().mean().clamp(min=0.5) * 2
    loss = F.smooth_l1_loss(y, target, beta=1.0)
    loss.backward()
    grads = {}
    for n in init_names:
        if n not in tensors:
            continue
        g = tensors[n].grad
        grads[n] = (g if g is not None else torch.zeros_like(tensors[n])).flatten().tolist()
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump({"input": x.flatten().tolist(), "input_shape": list(shape),
                   "target": target.flatten().tolist(), "output_shape": list(y.shape),
                   "output": y.detach().flatten().tolist(), "loss": loss.item(), "gradients": grads,
                   "made_by": f"torch {torch.__version__}, tools/personalize/grad_fixtures.py, seed {seed}"}, f)
    print(f"{name}: {len(init_names)} initializers, loss {loss.item():.5f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="Tests/InferTests/Fixtures/grad")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i, (name, (cls, shape)) in enumerate(GRAPHS.items()):
        make(name, cls, shape, args.out, args.seed + i)


if __name__ == "__main__":
    main()
