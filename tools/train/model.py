"""The colorcam colorizer: a small U-Net from L to ab with two heads sharing one trunk.

Input  x (N, 4, H, W), H and W multiples of 16: L * 0.02 - 1 (L in [0, 100]), the hint ab / 110 (a, b) and the
hint mask (1 where a hint is given); all-zero hints mean none (Zhang, Zhu et al. 2017's user points).
Heads:
  * regression at H/2: tanh(conv1x1) * 110 -> ab, then bilinear x2 to full resolution;
  * classification at H/4: Q logits over the in-gamut ab bins of size 10 (Zhang et al.'s 313-bin scheme), decoded by
    the annealed mean (softmax(logits / T) followed by a 1x1 conv holding the bin centres), bilinear x4.
Which head is exported is decided by eval.py on the held-out photos.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from labcolor import rgb2lab

AB_SCALE = 110.0


def gamut_bins(step=10):
    """ab bin centres (Q, 2) on a grid of `step` that some 8-bit sRGB colour falls into (313 in Zhang et al.)."""
    v = np.arange(0, 256, 3, dtype=np.float64) / 255.0
    inner = np.stack(np.meshgrid(v, v, v, indexing="ij"), -1).reshape(-1, 3)
    w = np.arange(256, dtype=np.float64) / 255.0
    face = np.stack(np.meshgrid(w, w, indexing="ij"), -1).reshape(-1, 2)
    faces = [np.insert(face, axis, value, axis=1) for axis in range(3) for value in (0.0, 1.0)]
    rgb = np.concatenate([inner] + faces)
    lab = rgb2lab(rgb)
    q = np.unique(np.round(lab[:, 1:] / step).astype(np.int64), axis=0)
    return (q * step).astype(np.float32)


def block(cin, cout, stride=1, dilation=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def scaled(channels, width):
    """A channel count times the width factor, rounded to a multiple of 8 (unchanged at width 1)."""
    return channels if width == 1 else max(8, int(round(channels * width / 8)) * 8)


def net_width(state):
    """The width factor a checkpoint was trained with (its args; 1.0 for checkpoints made before the option)."""
    return float((state.get("args") or {}).get("width", 1.0))


class ColorNet(nn.Module):
    """Encoder to 1/16 (dilated bottleneck), additive skips back to 1/2, two heads at 1/2 resolution.

    About 0.38 G multiply-adds at 256x256 (regression path), so one core can run it within a frame budget.
    """

    def __init__(self, widths=(16, 32, 64, 128), bins=None, in_channels=4, width=1.0):
        """width: a factor on every channel count (1.0: the shipped 16-32-64-128 / 24 architecture, exactly)."""
        super().__init__()
        self.width = float(width)
        c1, c2, c3, c4 = (scaled(c, width) for c in widths)
        cd = scaled(24, width)
        self.bins = torch.tensor(bins if bins is not None else gamut_bins())
        q = self.bins.shape[0]
        self.e1 = block(in_channels, c1, 2)                                   # 1/2
        self.e2 = nn.Sequential(block(c1, c2, 2), block(c2, c2))    # 1/4
        self.e3 = nn.Sequential(block(c2, c3, 2), block(c3, c3))    # 1/8
        self.e4 = nn.Sequential(block(c3, c4, 2), block(c4, c4, dilation=2), block(c4, c4, dilation=2))  # 1/16
        self.p4 = nn.Conv2d(c4, c3, 1)
        self.d3 = block(c3, c3)                                     # 1/8
        self.p3 = nn.Conv2d(c3, c2, 1)
        self.d2 = block(c2, c2)                                     # 1/4
        self.p2 = nn.Conv2d(c2, cd, 1)
        self.s1 = nn.Conv2d(c1, cd, 1)
        self.d1 = block(cd, cd)                                     # 1/2
        self.reg = nn.Conv2d(cd, 2, 1)
        self.cls = nn.Conv2d(c2, q, 1)                             # at 1/4, as in Zhang et al.

    @staticmethod
    def up(x):
        return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)

    def trunk(self, x):
        x1 = self.e1(x)
        x2 = self.e2(x1)
        x3 = self.e3(x2)
        x4 = self.e4(x3)
        y = self.d3(self.up(self.p4(x4)) + x3)
        q = self.d2(self.up(self.p3(y)) + x2)
        return self.d1(self.up(self.p2(q)) + self.s1(x1)), q

    def forward(self, x):
        """Returns (ab regression at H/2 in ab units, class logits at H/4)."""
        h, q = self.trunk(x)
        return torch.tanh(self.reg(h)) * AB_SCALE, self.cls(q)

    def decode_annealed(self, logits, temperature=0.38):
        p = torch.softmax(logits / temperature, 1)
        return torch.einsum("nqhw,qc->nchw", p, self.bins)


def model_input(L, hint_ab, hint_mask):
    """Raw L (N,1,H,W) in [0,100], hint ab (N,2,H,W) in ab units, mask (N,1,H,W) -> the trunk's input."""
    return torch.cat([L * 0.02 - 1.0, hint_ab / AB_SCALE, hint_mask], 1)


def graph_width(graph, path):
    """The width factor of an exported ColorNet's graph: its first convolution has scaled(16, width) = 16 x width
    outputs (exact for every width whose channel counts are multiples of 8)."""
    weights = {i.name: i for i in graph.initializer}
    first = next(n for n in graph.node if n.op_type == "Conv")
    c1 = weights[first.input[1]].dims[0]
    width = c1 / 16
    if scaled(16, width) != c1:
        raise SystemExit(f"{path}: first convolution has {c1} outputs, which no width factor gives")
    return width


def onnx_width(path):
    """The width factor of the exported ColorNet at `path` (`graph_width`)."""
    import onnx
    return graph_width(onnx.load(path).graph, path)


def init_from_onnx(net, path):
    """Loads an exported ColorNet's folded weights: each BatchNorm becomes the identity plus the folded bias (keep
    the BatchNorms in eval mode while training: see train.py), input channels the file lacks (hints) start at zero.
    The classification head is loaded when the file has it (a classification or mixed export); a regression-only
    export leaves it at its fresh initialisation. The net must have the file's width (`graph_width`)."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(path).graph
    weights = {i.name: numpy_helper.to_array(i).copy() for i in graph.initializer}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    blocks = [m for m in net.modules() if isinstance(m, nn.Sequential) and len(m) == 3
              and isinstance(m[0], nn.Conv2d) and isinstance(m[1], nn.BatchNorm2d)]
    plain = {"p4": net.p4, "p3": net.p3, "p2": net.p2, "s1": net.s1, "reg": net.reg}
    if "net.cls.weight" in weights:
        plain["cls"] = net.cls
    width = graph_width(graph, path)
    if getattr(net, "width", 1.0) != width:
        raise SystemExit(f"--init-onnx: {path} has width {width:g}; this net has width {net.width:g} (pass --width)")
    folded = [n for n in convs if not n.input[1].startswith("net.") and not n.input[1].startswith("decode.")]
    if len(folded) != len(blocks):
        raise SystemExit(f"{path}: {len(folded)} folded convolutions, the model has {len(blocks)} blocks")
    with torch.no_grad():
        for node, (conv, bn, _) in zip(folded, blocks):
            w = torch.from_numpy(weights[node.input[1]])
            if w.shape[0] != conv.weight.shape[0] or w.shape[2:] != conv.weight.shape[2:]:
                raise SystemExit(f"{path}: convolution {node.input[1]} is {tuple(w.shape)}, the net's "
                                 f"{tuple(conv.weight.shape)}")
            conv.weight.zero_()
            conv.weight[:, :w.shape[1]] = w
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(weights[node.input[2]]))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        for name, conv in plain.items():
            conv.weight.copy_(torch.from_numpy(weights[f"net.{name}.weight"]))
            conv.bias.copy_(torch.from_numpy(weights[f"net.{name}.bias"]))


class ExportWrapper(nn.Module):
    """What goes into the ONNX file: raw L (N,1,H,W) in [0,100], hint ab (N,2,H,W) and hint mask (N,1,H,W) ->
    ab (N,2,H,W) at full resolution. export.py gives the hint inputs all-zero initialisers (optional inputs)."""

    def __init__(self, net, head, temperature=0.38, mix=0.5):
        """head: "regression", "classification" (annealed mean at `temperature`) or "mixed": `mix` x the
        classification decode + (1 - mix) x the regression, both at full resolution."""
        super().__init__()
        self.net, self.head, self.temperature, self.mix = net, head, temperature, mix
        q = net.bins.shape[0]
        self.decode = nn.Conv2d(q, 2, 1, bias=False)
        self.decode.weight.data = net.bins.t().reshape(2, q, 1, 1).clone()

    def forward(self, L, hint_ab, hint_mask):
        h, q = self.net.trunk(model_input(L, hint_ab, hint_mask))
        reg = F.interpolate(torch.tanh(self.net.reg(h)) * AB_SCALE, scale_factor=2, mode="bilinear",
                            align_corners=False)
        if self.head == "regression":
            return reg
        cls = F.interpolate(self.decode(torch.softmax(self.net.cls(q) / self.temperature, 1)), scale_factor=4,
                            mode="bilinear", align_corners=False)
        if self.head == "classification":
            return cls
        return cls * self.mix + reg * (1 - self.mix)


def export_gflop(net, size=256):
    """Multiply-adds x 2 of the exported regression path at size x size (convolutions only), in GFLOP."""
    total = 0
    hooks = []

    def count(m, inp, out):
        nonlocal total
        k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
        total += 2 * out.numel() * k

    skip = {net.cls}
    for m in net.modules():
        if isinstance(m, nn.Conv2d) and m not in skip:
            hooks.append(m.register_forward_hook(count))
    with torch.no_grad():
        net.eval()
        h, q = net.trunk(torch.zeros(1, 4, size, size))
        net.reg(h)
    for hk in hooks:
        hk.remove()
    return total / 1e9


if __name__ == "__main__":
    import sys
    for w in [float(a) for a in sys.argv[1:]] or [1.0]:
        net = ColorNet(width=w)
        print(f"width {w}: bins {net.bins.shape[0]} params {sum(p.numel() for p in net.parameters())} "
              f"exported regression GFLOP at 256^2 {export_gflop(net):.2f}")
