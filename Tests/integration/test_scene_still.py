"""A still clip's scene laid once (tools/scenes/dr_render.py, render(still=)): the hand clips reuse the table, prints
and shadows of their first frame, and every frame must come out as the renderer draws it from scratch."""
import sys

import cv2
import numpy as np

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools/scenes"))
import dr_render  # noqa: E402


def test_frames_of_a_still_scene_laid_once_equal_frames_drawn_whole():
    photos = [("grey", np.full((300, 200, 3), 128, np.uint8)), ("ramp", np.tile(np.arange(300, dtype=np.uint8)[
        None, :, None], (200, 1, 3)))]
    width, height = 320, 240
    yy, xx = np.mgrid[0:height, 0:width]
    mask = ((xx - 160) ** 2 + (yy - 120) ** 2 < 60 ** 2).astype(np.float32)
    skin = np.full((height, width, 3), (200, 150, 120), np.float32)

    def hand_at(index):  # a disc that slides right, then is gone
        if index > 2:
            return None
        move = np.float32([[1, 0, 40 * index], [0, 1, 0]])
        return lambda corners: (cv2.warpAffine(mask, move, (width, height)), skin)

    for seed in (7, 93_000_011):
        laid = {}
        for index in range(5):
            whole = dr_render.render(seed, photos, width, height, "train", frame_index=index, hand=hand_at(index))
            reused = dr_render.render(seed, photos, width, height, "train", frame_index=index, hand=hand_at(index),
                                      still=laid)
            assert laid, "the first frame lays the scene"
            np.testing.assert_array_equal(whole[0], reused[0], err_msg=f"seed {seed} frame {index}")
            assert whole[2] == reused[2], (seed, index)
            for a, b in zip(whole[1], reused[1]):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        # Another scene's parameters lay it anew rather than reuse this one.
        other = dr_render.render(seed, photos, width, height, "heldout", frame_index=0, still=laid)
        np.testing.assert_array_equal(other[0], dr_render.render(seed, photos, width, height, "heldout",
                                                                 frame_index=0)[0])
