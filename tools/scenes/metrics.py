"""Detection scoring as in the SmartDoc 2015 challenge 1: each detected quad is mapped through the homography that
takes the ground-truth quad to the photo's upright rectangle (its true size), and the Jaccard index is taken there
between the mapped quad and the rectangle. A detection is a true positive when JI ≥ the threshold (0.9);
ground truths and detections are matched one-to-one, greedily by JI."""
import numpy as np


def homography(src, dst):
    """3×3 H with H·src_i ~ dst_i for four point pairs (DLT, exact)."""
    rows = []
    for (x, y), (u, v) in zip(src, dst):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, -u])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, -v])
    _, _, vt = np.linalg.svd(np.asarray(rows, np.float64))
    h = vt[-1].reshape(3, 3)
    return h / h[2, 2]


def apply(h, pts):
    p = np.concatenate([np.asarray(pts, np.float64), np.ones((len(pts), 1))], axis=1) @ h.T
    return p[:, :2] / p[:, 2:3]


def polygon_area(poly):
    if len(poly) < 3:
        return 0.0
    x, y = np.asarray(poly)[:, 0], np.asarray(poly)[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def clip_polygon(subject, x0, y0, x1, y1):
    """Sutherland–Hodgman clip of any polygon against an axis-aligned rectangle."""
    def clip(points, inside, intersect):
        out = []
        for i in range(len(points)):
            cur, prev = points[i], points[i - 1]
            if inside(cur):
                if not inside(prev):
                    out.append(intersect(prev, cur))
                out.append(cur)
            elif inside(prev):
                out.append(intersect(prev, cur))
        return out

    def at_x(xv):
        return lambda p, q: (xv, p[1] + (q[1] - p[1]) * (xv - p[0]) / (q[0] - p[0]))

    def at_y(yv):
        return lambda p, q: (p[0] + (q[0] - p[0]) * (yv - p[1]) / (q[1] - p[1]), yv)

    pts = [tuple(p) for p in subject]
    for inside, intersect in ((lambda p: p[0] >= x0, at_x(x0)), (lambda p: p[0] <= x1, at_x(x1)),
                              (lambda p: p[1] >= y0, at_y(y0)), (lambda p: p[1] <= y1, at_y(y1))):
        if not pts:
            break
        pts = clip(pts, inside, intersect)
    return pts


def jaccard(truth_corners, truth_size, detected_corners):
    """SmartDoc-style JI of a detection against one ground-truth photo (0 when the mapping degenerates)."""
    w, h = truth_size
    rect = [[0, 0], [w, 0], [w, h], [0, h]]
    hmat = homography(truth_corners, rect)
    mapped = apply(hmat, detected_corners)
    if not np.all(np.isfinite(mapped)):
        return 0.0
    # A detection straddling the horizon maps to a non-simple polygon; its area then means nothing.
    det = apply(hmat, detected_corners)
    src = np.concatenate([np.asarray(detected_corners, np.float64), np.ones((4, 1))], axis=1) @ hmat.T
    if np.any(src[:, 2] <= 0):
        return 0.0
    inter = polygon_area(clip_polygon(det, 0, 0, w, h))
    union = w * h + polygon_area(det) - inter
    return float(inter / union) if union > 0 else 0.0


def match(truths, detections, threshold=0.9):
    """truths: [{"corners", "size"}]; detections: [[[x,y]×4]]. Returns (true positives, list of best JI per truth)."""
    pairs = []
    for ti, t in enumerate(truths):
        for di, d in enumerate(detections):
            pairs.append((jaccard(t["corners"], t["size"], d), ti, di))
    pairs.sort(reverse=True)
    used_t, used_d, best = set(), set(), [0.0] * len(truths)
    tp = 0
    for ji, ti, di in pairs:
        if ti in used_t or di in used_d:
            continue
        used_t.add(ti)
        used_d.add(di)
        best[ti] = ji
        if ji >= threshold:
            tp += 1
    return tp, best


def quad_iou(a, b):
    """Intersection over union of two convex quads (corner lists, any consistent order)."""
    import cv2
    inter, _ = cv2.intersectConvexConvex(np.float32(a), np.float32(b))
    union = polygon_area(a) + polygon_area(b) - float(inter)
    return float(inter) / union if union > 0 else 0.0
