"""tools/scenes/debcache.py: a package's files are unpacked whole or not at all. A fake `apt-get` on PATH hands out a
small .deb built here (whole, or cut short as a full disk or a dropped connection leaves one); no network is used."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_apt(tmp_path):
    """(PATH with a fake apt-get, a function that sets how many bytes of the .deb it hands out: None for all)."""
    tree = tmp_path / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN/control").write_text("Package: colorcam-fixture\nVersion: 1.0\nArchitecture: all\n"
                                         "Maintainer: colorcam tests <tests@localhost>\nDescription: fixture\n")
    data = tree / "usr/share/colorcam-fixture"
    data.mkdir(parents=True)
    for i in range(40):  # enough bytes that a cut-short file lacks part of the data member
        (data / f"f{i}.bin").write_bytes(os.urandom(4096))
    deb = tmp_path / "colorcam-fixture_1.0_all.deb"
    subprocess.run(["dpkg-deb", "--build", "-Zgzip", str(tree), str(deb)], check=True, capture_output=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    limit = tmp_path / "limit"
    (bin_dir / "apt-get").write_text(
        f"#!/bin/sh\n[ \"$1\" = download ] || exit 100\n"
        f"if [ -s {limit} ]; then head -c \"$(cat {limit})\" {deb} > colorcam-fixture_1.0_all.deb; "
        f"else cp {deb} .; fi\n")
    (bin_dir / "apt-get").chmod(0o755)

    def cut(size):
        limit.write_text("" if size is None else str(size))
    return f"{bin_dir}:{os.environ['PATH']}", cut, deb.stat().st_size


def unpack(cache, path_env):
    code = f"import debcache; print(debcache.unpacked('colorcam-fixture', {str(cache)!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT / "tools/scenes", capture_output=True, text=True,
                          env={**os.environ, "PATH": path_env})


def test_a_cut_short_download_fails_in_one_line_and_leaves_nothing_then_a_whole_one_is_unpacked(fake_apt, tmp_path):
    path_env, cut, size = fake_apt
    cache = tmp_path / "cache"
    cut(size // 2)
    failed = unpack(cache, path_env)
    assert failed.returncode == 2, failed.stderr
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot unpack colorcam-fixture_1.0_all.deb" in lines[0], failed.stderr
    assert f"({size // 2} bytes;" in lines[0] and "MiB free under" in lines[0], lines[0]
    assert sorted(p.name for p in cache.iterdir()) == ["deb-colorcam-fixture.lock"], "nothing half-unpacked is kept"
    cut(None)
    done = unpack(cache, path_env)
    assert done.returncode == 0, done.stderr
    root = Path(done.stdout.strip())
    assert root == cache / "deb-colorcam-fixture"
    assert len(list((root / "usr/share/colorcam-fixture").iterdir())) == 40
    assert not list(cache.glob("*.deb")) and not list(cache.glob(".deb-*")), "the .deb and temporary folders go"
    cut(10)  # a later call uses what is unpacked and fetches nothing
    assert unpack(cache, path_env).returncode == 0


def test_a_package_that_cannot_be_fetched_is_one_line_naming_it(fake_apt, tmp_path):
    path_env, _, _ = fake_apt
    failed = unpack(tmp_path / "cache", "/nonexistent-bin:" + path_env.split(":", 1)[1])
    assert failed.returncode == 2
    assert failed.stderr.startswith("debcache: cannot fetch colorcam-fixture (run 'apt-get update' first)"), failed.stderr
