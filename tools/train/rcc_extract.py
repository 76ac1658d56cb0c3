"""Extract files from a Qt binary resource (.rcc) file.

Format (Qt's rcc, versions 1-3), all integers big-endian:
  header: b"qres", u32 version, u32 tree offset, u32 data offset, u32 names offset, [v3: u32 flags]
  tree node (14 bytes, +8 for a modification time from version 2 on):
      u32 name offset, u16 flags (0x02 directory, 0x01 zlib, 0x04 zstd),
      directory: u32 child count, u32 first child index;  file: u16 country, u16 language, u32 data offset
  name: u16 length in UTF-16 units, u32 hash, UTF-16BE text
  data: u32 length, bytes (zlib-compressed data starts with a u32 uncompressed size)
Used only by build_dataset.py to reach the photographs inside gcompris-qt-data.
"""
import struct
import zlib


def read_rcc(path):
    """Yields (relative path, bytes) for every file in the resource; skips zstd entries (none in gcompris 3.1)."""
    blob = open(path, "rb").read()
    if blob[:4] != b"qres":
        raise ValueError(f"{path}: not a Qt resource file (magic {blob[:4]!r})")
    version, tree, data, names = struct.unpack(">IIII", blob[4:20])
    node_size = 14 if version < 2 else 22

    def name_at(off):
        (n,) = struct.unpack(">H", blob[names + off:names + off + 2])
        raw = blob[names + off + 6:names + off + 6 + 2 * n]
        return raw.decode("utf-16-be")

    def walk(index, prefix):
        base = tree + index * node_size
        name_off, flags = struct.unpack(">IH", blob[base:base + 6])
        name = name_at(name_off) if index != 0 else ""
        path_here = f"{prefix}/{name}" if prefix else name
        if flags & 0x02:
            count, first = struct.unpack(">II", blob[base + 6:base + 14])
            for child in range(first, first + count):
                yield from walk(child, path_here)
        else:
            (data_off,) = struct.unpack(">I", blob[base + 10:base + 14])
            (length,) = struct.unpack(">I", blob[data + data_off:data + data_off + 4])
            payload = blob[data + data_off + 4:data + data_off + 4 + length]
            if flags & 0x04:
                return
            if flags & 0x01:
                payload = zlib.decompress(payload[4:])
            yield path_here, payload

    yield from walk(0, "")


if __name__ == "__main__":
    import sys
    for p, b in read_rcc(sys.argv[1]):
        print(len(b), p)
