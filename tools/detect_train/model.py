"""The detector's front-end CNN: a small U-Net on the coarse grid (one cell = 4 px at 640×480).

Input [1, 3, H, W] (Y/255 − 0.5, (Cb − 128)/128, (Cr − 128)/128 cell means; H, W multiples of 8); output [1, 10, H, W]:
channels 0–1 probabilities (print interior, paper edge), channels 2–9 the corners of the print this cell lies in, as
offsets in cells from the cell's centre (x0, y0, … x3, y3, clockwise on screen, any corner first; amodal: where a hand
or the frame's edge hides a corner, where it should be). Three poolings, dilated convolutions at 1/8 for context
(receptive field ≈ 150 cells), nearest upsampling, skip connections; BatchNorm folds into the convolutions at load
time. `corners=False` builds the older two-channel net (for loading its exports).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def block(cin, cout, dilation=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class PrintNet(nn.Module):
    def __init__(self, width=1.0, corners=True, corner_kernel=1):
        super().__init__()
        c0, c1, c2, c3 = (int(round(v * width)) for v in (16, 24, 32, 48))
        self.stem = block(3, c0)
        self.e1 = nn.Sequential(block(c0, c1), block(c1, c1))
        self.e2 = nn.Sequential(block(c1, c2), block(c2, c2))
        self.e3 = nn.Sequential(block(c2, c3), block(c3, c3, 2), block(c3, c3, 4), block(c3, c3, 8))
        self.d2 = block(c3 + c2, c2)
        self.d1 = block(c2 + c1, c0)
        self.head = nn.Sequential(nn.Conv2d(c0 + c0, 16, 1), nn.ReLU(inplace=True), nn.Conv2d(16, 2, 1))
        self.corner_head = nn.Sequential(nn.Conv2d(c0 + c0 + c2, 32, corner_kernel, padding=corner_kernel // 2),
                                         nn.ReLU(inplace=True),
                                         nn.Conv2d(32, 8, 1)) if corners else None

    def features(self, x):
        x0 = self.stem(x)
        x1 = self.e1(F.max_pool2d(x0, 2))
        x2 = self.e2(F.max_pool2d(x1, 2))
        x3 = self.e3(F.max_pool2d(x2, 2))
        u2 = self.d2(torch.cat([F.interpolate(x3, scale_factor=2.0, mode="nearest"), x2], 1))
        u1 = self.d1(torch.cat([F.interpolate(u2, scale_factor=2.0, mode="nearest"), x1], 1))
        top = torch.cat([F.interpolate(u1, scale_factor=2.0, mode="nearest"), x0], 1)
        return top, u2

    def logits(self, x):
        """(map logits [N, 2, H, W], corner offsets [N, 8, H, W] in cells or None)."""
        top, u2 = self.features(x)
        maps = self.head(top)
        if self.corner_head is None:
            return maps, None
        wide = torch.cat([top, F.interpolate(u2, scale_factor=4.0, mode="nearest")], 1)
        return maps, self.corner_head(wide) * CORNER_SCALE_CELLS

    def forward(self, x):
        maps, corners = self.logits(x)
        return torch.sigmoid(maps) if corners is None else torch.cat([torch.sigmoid(maps), corners], 1)


CORNER_SCALE_CELLS = 32.0  # the corner head's raw output × this = cells


def from_state(state_dict):
    """A PrintNet shaped like the one `state_dict` was saved from (its width, corner head or not, its kernel)."""
    weight = state_dict.get("corner_head.0.weight")
    width = state_dict["stem.0.weight"].shape[0] / 16
    net = PrintNet(width=width, corners=weight is not None, corner_kernel=1 if weight is None else weight.shape[-1])
    net.load_state_dict(state_dict)
    return net


def normalise(x_uint8):
    """uint8 [N, 3, H, W] cell means (Y, Cb, Cr) → the model's float input."""
    x = x_uint8.float()
    return torch.stack([x[:, 0] / 255 - 0.5, (x[:, 1] - 128) / 128, (x[:, 2] - 128) / 128], 1)
