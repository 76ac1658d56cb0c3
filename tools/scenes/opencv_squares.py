"""The OpenCV baseline: the squares.cpp approach (OpenCV samples/cpp/squares.cpp), re-implemented in Python cv2.

Per colour plane and per level: Canny (level 0) or a binary threshold (levels 1…N-1), findContours, approxPolyDP at
2 % of the perimeter, keep convex quads of sufficient area whose corner angles have |cos| < 0.3; then one detection
per photo (largest of any overlapping group), so it is scored like colorcam.
"""
import cv2
import numpy as np

THRESHOLD_LEVELS = 11


def _angle_cos(p0, p1, p2):
    d1, d2 = p0 - p2, p1 - p2
    return abs(np.dot(d1, d2) / np.sqrt(np.dot(d1, d1) * np.dot(d2, d2) + 1e-10))


def find_squares(bgr, min_area_fraction=0.01, max_cos=0.3):
    height, width = bgr.shape[:2]
    min_area = min_area_fraction * width * height
    pyr = cv2.pyrUp(cv2.pyrDown(bgr))  # the sample's noise suppression
    squares = []
    for channel in cv2.split(pyr):
        for level in range(THRESHOLD_LEVELS):
            if level == 0:
                binary = cv2.dilate(cv2.Canny(channel, 0, 50, apertureSize=5), None)
            else:
                _, binary = cv2.threshold(channel, (level + 1) * 255 / THRESHOLD_LEVELS, 255, cv2.THRESH_BINARY)
            contours, _ = cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
            for contour in contours:
                approx = cv2.approxPolyDP(contour, cv2.arcLength(contour, True) * 0.02, True)
                if len(approx) != 4 or abs(cv2.contourArea(approx)) < min_area or not cv2.isContourConvex(approx):
                    continue
                pts = approx.reshape(4, 2).astype(np.float64)
                worst = max(_angle_cos(pts[(j + 1) % 4], pts[j - 1], pts[j]) for j in range(4))
                if worst < max_cos:
                    squares.append(pts)
    # Merge duplicates (the same outline found on several planes/levels, or the image border): keep the largest of
    # each group of quads whose centres fall inside one another; drop quads touching the image border.
    keep = []
    for quad in sorted(squares, key=lambda q: -abs(cv2.contourArea(q.astype(np.float32)))):
        if quad[:, 0].min() <= 1 or quad[:, 1].min() <= 1 or quad[:, 0].max() >= width - 2 \
                or quad[:, 1].max() >= height - 2:
            continue
        centre = quad.mean(axis=0)
        duplicate = False
        for other in keep:
            if cv2.pointPolygonTest(other.astype(np.float32), tuple(centre), False) >= 0 or \
                    cv2.pointPolygonTest(quad.astype(np.float32), tuple(other.mean(axis=0)), False) >= 0:
                duplicate = True
                break
        if not duplicate:
            keep.append(quad)
    # Pixel corners → continuous coordinates (pixel centres at +0.5).
    return [(q + 0.5).tolist() for q in keep]
