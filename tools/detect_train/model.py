"""The detector's front-end CNN: a small U-Net on the coarse grid (one cell = 4 px at 640×480).

Input [1, 3, H, W] (Y/255 − 0.5, (Cb − 128)/128, (Cr − 128)/128 cell means; H, W multiples of 8); output [1, 2, H, W]
probabilities: print interior, paper edge. Three poolings, dilated convolutions at 1/8 for context (receptive field
≈ 150 cells), nearest upsampling, skip connections; BatchNorm folds into the convolutions at load time.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def block(cin, cout, dilation=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class PrintNet(nn.Module):
    def __init__(self, width=1.0):
        super().__init__()
        c0, c1, c2, c3 = (int(round(v * width)) for v in (16, 24, 32, 48))
        self.stem = block(3, c0)
        self.e1 = nn.Sequential(block(c0, c1), block(c1, c1))
        self.e2 = nn.Sequential(block(c1, c2), block(c2, c2))
        self.e3 = nn.Sequential(block(c2, c3), block(c3, c3, 2), block(c3, c3, 4), block(c3, c3, 8))
        self.d2 = block(c3 + c2, c2)
        self.d1 = block(c2 + c1, c0)
        self.head = nn.Sequential(nn.Conv2d(c0 + c0, 16, 1), nn.ReLU(inplace=True), nn.Conv2d(16, 2, 1))

    def logits(self, x):
        x0 = self.stem(x)
        x1 = self.e1(F.max_pool2d(x0, 2))
        x2 = self.e2(F.max_pool2d(x1, 2))
        x3 = self.e3(F.max_pool2d(x2, 2))
        u2 = self.d2(torch.cat([F.interpolate(x3, scale_factor=2.0, mode="nearest"), x2], 1))
        u1 = self.d1(torch.cat([F.interpolate(u2, scale_factor=2.0, mode="nearest"), x1], 1))
        return self.head(torch.cat([F.interpolate(u1, scale_factor=2.0, mode="nearest"), x0], 1))

    def forward(self, x):
        return torch.sigmoid(self.logits(x))


def normalise(x_uint8):
    """uint8 [N, 3, H, W] cell means (Y, Cb, Cr) → the model's float input."""
    x = x_uint8.float()
    return torch.stack([x[:, 0] / 255 - 0.5, (x[:, 1] - 128) / 128, (x[:, 2] - 128) / 128], 1)
