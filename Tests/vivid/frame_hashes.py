#!/usr/bin/env python3
"""Prints one line per frame: the MD5 of its 640x480 luma plane (runs in the vivid guest; stdlib only).

usage: frame_hashes.py y4m FILE.y4m | frame_hashes.py YUYV|YU12 FILE.raw
A .y4m frame line's Xts_us tag, when present, follows the hash."""
import hashlib
import re
import sys

W, H = 640, 480
kind, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    data = f.read()
if kind == "y4m":
    end = data.index(b"\n")
    size = W * H * 3 // 2
    pos = end + 1
    while pos < len(data):
        line_end = data.index(b"\n", pos)
        m = re.search(rb"Xts_us=(-?\d+)", data[pos:line_end])
        luma = data[line_end + 1:line_end + 1 + W * H]
        print(hashlib.md5(luma).hexdigest(), m.group(1).decode() if m else "")
        pos = line_end + 1 + size
elif kind == "YUYV":
    size = W * H * 2
    for k in range(len(data) // size):
        print(hashlib.md5(data[k * size:(k + 1) * size][0::2]).hexdigest())
elif kind == "YU12":
    size = W * H * 3 // 2
    for k in range(len(data) // size):
        print(hashlib.md5(data[k * size:k * size + W * H]).hexdigest())
else:
    sys.exit(f"frame_hashes.py: unknown kind {kind}")
