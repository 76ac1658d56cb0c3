"""Collects the detect renderer's photo set from installed packages and splits it (seeded, by photo) into a tuning set
and a held-out benchmark set.

Sources (all disjoint from the colorizer's training set: lomiri/mate/plasma/palapeli/enlightenment/gcompris/tuxpaint):
  - scikit-image (PyPI) sample data: astronaut, chelsea, coffee, rocket, stereo_motorcycle left view (public domain / CC0 per the
    skimage.data docstrings)
  - scikit-learn (PyPI) sample images: china.jpg, flower.jpg (CC-BY-2.0, per sklearn's README for the images)
  - matplotlib (PyPI) sample data: grace_hopper.jpg (US Navy photo, public domain)
  - Debian opencv-doc examples/data photos (licence not stated per image; BSD-3 package), fetched with
    `apt-get download opencv-doc` and unpacked with `dpkg -x` into the cache folder (not installed; debcache.py).

The split is by photo, seeded (SPLIT_SEED), so a benchmark never renders a photo that tuning saw.
"""
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import debcache  # noqa: E402

SPLIT_SEED = 20261130
TUNING_FRACTION = 0.4
OPENCV_DOC_PHOTOS = [
    "HappyFish.jpg", "aero1.jpg", "apple.jpg", "baboon.jpg", "building.jpg", "butterfly.jpg", "fruits.jpg",
    "home.jpg", "leuvenA.jpg", "messi5.jpg", "orange.jpg", "squirrel_cls.jpg", "ela_original.jpg", "graf1.png",
    "rubberwhale1.png", "smarties.png",
]
SKIMAGE_PHOTOS = ["astronaut", "chelsea", "coffee", "rocket", "stereo_motorcycle"]


def _fail(message):
    sys.stderr.write("photos: " + message + "\n")
    sys.exit(2)


def _opencv_doc_dir(cache_dir):
    system_dir = "/usr/share/doc/opencv-doc/examples/data"
    if os.path.isdir(system_dir):
        return system_dir
    return os.path.join(debcache.unpacked("opencv-doc", cache_dir), "usr/share/doc/opencv-doc/examples/data")


def load_all(cache_dir):
    """Returns a list of (name, RGB uint8 array) for every photo, in a fixed order."""
    try:
        import cv2
        import matplotlib.cbook
        import skimage.data
        from sklearn.datasets import load_sample_images
    except ImportError as error:
        _fail(f"missing Python package ({error}); install: pip install opencv-python-headless scikit-image "
              "scikit-learn matplotlib")
    photos = []
    for name in SKIMAGE_PHOTOS:
        image = getattr(skimage.data, name)()
        if name == "stereo_motorcycle":
            image = image[0]  # (left, right, disparity): the left view
        photos.append(("skimage:" + name, np.ascontiguousarray(image[..., :3])))
    sample = load_sample_images()
    for filename, image in zip(sample.filenames, sample.images):
        photos.append(("sklearn:" + os.path.basename(filename), image))
    with matplotlib.cbook.get_sample_data("grace_hopper.jpg") as handle:
        data = np.frombuffer(handle.read(), np.uint8)
    photos.append(("matplotlib:grace_hopper.jpg", cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)))
    doc_dir = _opencv_doc_dir(cache_dir)
    for filename in OPENCV_DOC_PHOTOS:
        bgr = cv2.imread(os.path.join(doc_dir, filename), cv2.IMREAD_COLOR)
        if bgr is None:
            _fail(f"opencv-doc photo {filename} is missing from {doc_dir}")
        photos.append(("opencv-doc:" + filename, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    return photos


def split(photos):
    """Splits by photo name, seeded: returns (tuning, benchmark) lists of (name, image)."""
    names = sorted(name for name, _ in photos)
    random.Random(SPLIT_SEED).shuffle(names)
    tuning_names = set(names[: int(round(len(names) * TUNING_FRACTION))])
    tuning = [p for p in photos if p[0] in tuning_names]
    benchmark = [p for p in photos if p[0] not in tuning_names]
    return tuning, benchmark


def photo_set(which, cache_dir):
    tuning, benchmark = split(load_all(cache_dir))
    return {"tuning": tuning, "benchmark": benchmark}[which]


if __name__ == "__main__":
    cache = sys.argv[1] if len(sys.argv) > 1 else ".build/scenes-cache"
    tuning, benchmark = split(load_all(cache))
    print("tuning:", ", ".join(n for n, _ in tuning))
    print("benchmark:", ", ".join(n for n, _ in benchmark))
