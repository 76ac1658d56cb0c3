"""A Debian package's files, unpacked (never installed) into a cache folder: `unpacked(package, cache_dir)`.

The .deb is fetched with `apt-get download` into a fresh temporary folder and unpacked with `dpkg -x` into another;
only a whole unpacking is renamed into place (`cache_dir/deb-PACKAGE`), and the .deb is then deleted. A download or
unpacking that fails (no network, a truncated file, a full disk) leaves nothing behind that a later run would take for
whole, and exits 2 with one line naming the package and what went wrong. Concurrent callers wait on a lock file.
"""
import fcntl
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def _fail(message):
    sys.stderr.write("debcache: " + message + "\n")
    sys.exit(2)


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def unpacked(package, cache_dir):
    """The root of `package`'s unpacked files (its usr/… tree below it), fetched and unpacked once."""
    root = os.path.join(cache_dir, "deb-" + package)
    if os.path.isdir(root):
        return root
    os.makedirs(cache_dir, exist_ok=True)
    with open(os.path.join(cache_dir, "deb-" + package + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if os.path.isdir(root):
            return root
        work = tempfile.mkdtemp(prefix=".deb-" + package + "-", dir=cache_dir)
        try:
            fetched = subprocess.run(["apt-get", "download", "-q", package], cwd=work, capture_output=True, text=True)
            debs = glob.glob(os.path.join(work, package + "_*.deb"))
            if fetched.returncode != 0 or len(debs) != 1:
                _fail(f"cannot fetch {package} (run 'apt-get update' first): {_last_line(fetched.stderr)}")
            files = os.path.join(work, "files")
            unpacking = subprocess.run(["dpkg", "-x", debs[0], files], capture_output=True, text=True)
            if unpacking.returncode != 0:
                free_mib = shutil.disk_usage(cache_dir).free // (1 << 20)
                _fail(f"cannot unpack {os.path.basename(debs[0])} ({os.path.getsize(debs[0])} bytes; {free_mib} MiB "
                      f"free under {cache_dir}): {_last_line(unpacking.stderr)}")
            os.rename(files, root)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return root
