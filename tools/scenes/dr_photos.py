"""Photos for the domain-randomized generator, split by photo instance into train and held-out.

  train:   the detect renderer's tuning photos (photos.py) + photos from Debian wallpaper packages
           (mate-backgrounds nature/, palapeli-data, lomiri-wallpapers-16.04; fetched with `apt-get download`, unpacked
           with `dpkg -x` into the cache folder: debcache.py) + procedural pictures (dr_render.synthetic_picture)
  heldout: the detect renderer's benchmark photos (photos.py): never rendered into a training scene

Images are cached downscaled to ≤ 1024 px on the long side (`CACHE/dr-photos-<split>.npz`). Filling the cache
holds a lock (`CACHE/dr-photos.lock`), so renderers started side by side fetch and unpack each package once.
"""
import fcntl
import glob
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import debcache  # noqa: E402
import photos as scene_photos  # noqa: E402

PACKAGES = {
    "mate-backgrounds": "usr/share/backgrounds/mate/nature/*.jpg",
    "palapeli-data": "usr/share/palapeli/collection/*.jpg",
    "lomiri-wallpapers-16.04": "usr/share/backgrounds/*.jpg",
}


def _fail(message):
    sys.stderr.write("dr_photos: " + message + "\n")
    sys.exit(2)


def _package_photos(cache_dir):
    out = []
    for package, pattern in PACKAGES.items():
        root = debcache.unpacked(package, cache_dir)
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            bgr = cv2.imread(path, cv2.IMREAD_COLOR)
            if bgr is not None:
                out.append((package + ":" + os.path.basename(path), cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    return out


def _shrink(image, long_px=1024):
    scale = long_px / max(image.shape[:2])
    if scale >= 1:
        return image
    size = (int(round(image.shape[1] * scale)), int(round(image.shape[0] * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def photo_set(split, cache_dir):
    """[(name, RGB uint8)] for `split` ('train' or 'heldout'), cached."""
    cache = os.path.join(cache_dir, f"dr-photos-{split}.npz")
    if not os.path.exists(cache):
        os.makedirs(cache_dir, exist_ok=True)
        with open(os.path.join(cache_dir, "dr-photos.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not os.path.exists(cache):
                _fill(split, cache_dir, cache)
    data = np.load(cache, allow_pickle=False)
    names = [str(n) for n in data["names"]]
    return [(n, data[f"p{i}"]) for i, n in enumerate(names)]


def _fill(split, cache_dir, cache):
    tuning, benchmark = scene_photos.split(scene_photos.load_all(cache_dir))
    if split == "train":
        chosen = tuning + _package_photos(cache_dir)
    elif split == "heldout":
        chosen = benchmark
    else:
        _fail(f"unknown split {split!r}")
    chosen = [(n, _shrink(np.ascontiguousarray(p))) for n, p in chosen]
    os.makedirs(cache_dir, exist_ok=True)
    np.savez(cache + ".partial.npz", names=np.array([n for n, _ in chosen]),
             **{f"p{i}": p for i, (_, p) in enumerate(chosen)})
    os.replace(cache + ".partial.npz", cache)


def write_jpegs(split, cache_dir, out_dir, quality=94):
    """Writes `split`'s photos to out_dir as JPEG files (a compact copy to carry to another machine; read back with
    stream_train.py --photos). Returns how many."""
    import re
    os.makedirs(out_dir, exist_ok=True)
    photos = photo_set(split, cache_dir)
    for i, (name, rgb) in enumerate(photos):
        stem = re.sub(r"\.(jpe?g|png)$", "", re.sub(r"[^A-Za-z0-9._-]", "_", name))
        path = os.path.join(out_dir, f"{i:03d}-{stem}.jpg")
        if not cv2.imwrite(path, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality]):
            _fail(f"cannot write {path}")
    return len(photos)


if __name__ == "__main__":
    # dr_photos.py [CACHE]: lists each split's photos; dr_photos.py CACHE --jpeg-dir DIR: writes the train split as JPEG
    cache_dir = sys.argv[1] if len(sys.argv) > 1 else ".build/scenes-cache"
    if len(sys.argv) > 3 and sys.argv[2] == "--jpeg-dir":
        print(f"dr_photos: {write_jpegs('train', cache_dir, sys.argv[3])} train-split photos in {sys.argv[3]}")
        sys.exit(0)
    for s in ("train", "heldout"):
        print(s, [n for n, _ in photo_set(s, cache_dir)])
