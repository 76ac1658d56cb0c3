"""Finds and starts preview-harness (synthetic 640x480 30 fps frames behind the preview server) for the preview tests."""
import os
import subprocess

from conftest import ROOT


def harness_path():
    """PREVIEW_HARNESS, else the debug build, else the release build."""
    if os.environ.get("PREVIEW_HARNESS"):
        return os.environ["PREVIEW_HARNESS"]
    for build in ("debug", "release"):
        path = ROOT / ".build" / build / "preview-harness"
        if path.exists():
            return str(path)
    raise AssertionError("preview-harness not built: run 'swift build --product preview-harness' "
                         "(or set PREVIEW_HARNESS)")


def start_harness(*extra, **popen_args):
    """Starts the harness on a free loopback port; returns (process, base URL)."""
    proc = subprocess.Popen([harness_path(), "--listen", "127.0.0.1:0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen_args)
    line = proc.stdout.readline()
    if not line.startswith("listening on http://127.0.0.1:"):
        proc.kill()
        raise AssertionError(f"harness did not start: {line!r} {proc.stderr.read()}")
    return proc, line.split()[2]
