"""The systemd units in contrib/: the shipped files pass `systemd-analyze verify`, and two colorcam@ instances run
side by side from the template's own ExecStart= (a file standing in for each camera), set up with the lines
`colorcam devices --units-for` prints."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

import systemd_unit
from conftest import ROOT, run

CONTRIB = ROOT / "contrib"
SHIPPED_BINARY = "/usr/local/bin/colorcam"
SHIPPED_ENV_FILE = "/etc/colorcam/%i.env"


def systemd_analyze():
    exe = shutil.which("systemd-analyze") or ("/usr/bin/systemd-analyze"
                                              if os.path.exists("/usr/bin/systemd-analyze") else None)
    assert exe, "systemd-analyze is required: apt-get install systemd (make test installs it)"
    return exe


def substitute(text, pattern, replacement):
    """`text` with the one line matching `pattern` (re.M) rewritten; fails if the unit has none or several."""
    new, n = re.subn(pattern, replacement, text, flags=re.M)
    assert n == 1, f"expected one line matching {pattern!r} in the unit, found {n}"
    return new


@pytest.mark.parametrize("unit_file, unit_name", [("colorcam@.service", "colorcam@video0.service"),
                                                  ("colorcam.service", "colorcam.service")])
def test_shipped_unit_passes_systemd_analyze_verify(colorcam, tmp_path, unit_file, unit_name):
    """verify checks that ExecStart='s binary exists, so the test's copy runs the built one; the template's env
    file points at a temp file. Everything else is the shipped text."""
    analyze = systemd_analyze()
    text = (CONTRIB / unit_file).read_text()
    text = substitute(text, r"^ExecStart=" + re.escape(SHIPPED_BINARY) + r"(?= )", "ExecStart=" + colorcam)
    if "@" in unit_file:
        text = substitute(text, r"^EnvironmentFile=" + re.escape(SHIPPED_ENV_FILE) + "$",
                          f"EnvironmentFile={tmp_path}/%i.env")
        (tmp_path / "video0.env").write_text("COLORCAM_LISTEN=127.0.0.1:8080\n")
    (tmp_path / unit_file).write_text(text)
    p = run(analyze, "verify", "--man=no", tmp_path / unit_name, check=False)
    said = (p.stdout + p.stderr).splitlines()
    about_unit = [line for line in said if "colorcam" in line or str(tmp_path) in line]
    assert p.returncode == 0 and not about_unit, f"exit {p.returncode}:\n" + "\n".join(said)

    # verify really read this unit: the same text with a binary that does not exist fails
    (tmp_path / unit_file).write_text(text.replace("ExecStart=" + colorcam, f"ExecStart={tmp_path}/missing"))
    p = run(analyze, "verify", "--man=no", tmp_path / unit_name, check=False)
    assert p.returncode != 0 and f"{tmp_path}/missing" in p.stdout + p.stderr, p.stdout + p.stderr


def test_devices_units_for_prints_one_port_per_camera(colorcam):
    p = run(colorcam, "devices", "--units-for", "/dev/video0,video2,/dev/cam-door", "--base-port", "9100")
    assert p.stdout.splitlines() == [
        '# one colorcam@.service per camera (contrib/colorcam@.service; contrib/README.md, "Many cameras")',
        "sudo mkdir -p /etc/colorcam",
        "echo 'COLORCAM_LISTEN=127.0.0.1:9100' | sudo tee /etc/colorcam/video0.env",
        "sudo systemctl enable --now colorcam@video0    # /dev/video0, preview http://127.0.0.1:9100/",
        "echo 'COLORCAM_LISTEN=127.0.0.1:9101' | sudo tee /etc/colorcam/video2.env",
        "sudo systemctl enable --now colorcam@video2    # /dev/video2, preview http://127.0.0.1:9101/",
        "echo 'COLORCAM_LISTEN=127.0.0.1:9102' | sudo tee /etc/colorcam/cam-door.env",
        "sudo systemctl enable --now colorcam@cam-door    # /dev/cam-door, preview http://127.0.0.1:9102/",
    ]
    assert "8080" in run(colorcam, "devices", "--units-for", "video0").stdout
    for bad, words in [(["--units-for", "/dev/v4l/by-id/usb-cam"], "not a node directly under /dev"),
                       (["--units-for", "video0,/dev/video0"], "given twice"),
                       (["--units-for", "video0,,video1"], "empty device name"),
                       (["--units-for", "vid eo0"], "cannot be a unit instance name"),
                       (["--units-for", "video0,video1", "--base-port", "65535"], "do not fit"),
                       (["--units-for", "video0", "--device", "/dev/video0"], "not both")]:
        p = run(colorcam, "devices", *bad, check=False)
        assert p.returncode == 64 and words in p.stderr and len(p.stderr.splitlines()) == 1, (bad, p.stderr)


def free_port_pair():
    """A port P with P and P + 1 both free now (the setup lines give consecutive ports)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port
    raise AssertionError("no two consecutive free ports")


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


def wait_until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{what} within {seconds} s")


def test_two_template_instances_run_side_by_side(colorcam, tmp_path):
    """Each instance's command line is the template's ExecStart= with systemd's substitutions (%i, the env files'
    ${COLORCAM_LISTEN} and $COLORCAM_ARGS), /var/lib and /etc/colorcam moved under tmp_path, StateDirectory=
    created as systemd would, and `--device /dev/%i` replaced by `--source` a short recording with two prints."""
    base_port = free_port_pair()
    setup = run(colorcam, "devices", "--units-for", "/dev/video0,/dev/video2", "--base-port", base_port).stdout
    names = re.findall(r"^sudo systemctl enable --now colorcam@(\S+)", setup, flags=re.M)
    env_lines = {name: line for line, name in
                 re.findall(r"^echo '(.*)' \| sudo tee /etc/colorcam/(\S+)\.env$", setup, flags=re.M)}
    assert names == ["video0", "video2"] and sorted(env_lines) == sorted(names), setup
    etc, var_lib = tmp_path / "etc-colorcam", tmp_path / "var-lib"
    etc.mkdir()
    (etc / "video0.env").write_text(env_lines["video0"] + "\n")
    # the second camera also passes extra options: $COLORCAM_ARGS splits into words and wins over the unit's
    (etc / "video2.env").write_text(env_lines["video2"] + "\nCOLORCAM_ARGS=--trace-max-mb 8 --trace-keep 2\n")
    remap = {"/etc/colorcam/": f"{etc}/", "/var/lib/": f"{var_lib}/"}

    clip = tmp_path / "clip.y4m"
    run(sys.executable, ROOT / "tools/demo/scene.py", "--out", clip, "--truth", tmp_path / "truth.json",
        "--frames", "30", "--quiet")
    unit = systemd_unit.parse((CONTRIB / "colorcam@.service").read_text())
    procs = {}
    try:
        for name in names:
            env = systemd_unit.environment(unit, name, remap)
            for entry in systemd_unit.values(unit, "Service", "StateDirectory"):
                for directory in systemd_unit.specifiers(entry, name).split():
                    (var_lib / directory).mkdir(parents=True)
            (workdir,) = systemd_unit.values(unit, "Service", "WorkingDirectory")
            workdir = systemd_unit.remap_path(systemd_unit.specifiers(workdir, name), remap)
            argv = [systemd_unit.remap_path(w, remap) for w in systemd_unit.exec_start(unit, name, env)]
            assert argv[0] == SHIPPED_BINARY and argv[1] == "live", argv
            device = argv.index("--device")
            assert argv[device + 1] == f"/dev/{name}", argv
            argv[0], argv[device:device + 2] = colorcam, ["--source", str(clip)]
            log = open(tmp_path / f"{name}.log", "w")
            procs[name] = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=log,
                                           env=dict(os.environ, COLORCAM_MODELS=str(ROOT / "Models"), **env))
            log.close()
        bases = {name: "http://" + env_lines[name].split("=", 1)[1] for name in names}
        assert len(set(bases.values())) == 2, bases

        def stats(name):
            return json.loads(get(bases[name] + "/stats.json")[1])
        for name in names:
            wait_until(lambda: get(bases[name] + "/healthz", timeout=1)[0] == 200, 20, f"{name} /healthz answers")
            wait_until(lambda: stats(name)["framesOutput"] > 0, 30, f"{name} outputs frames")
        first = {name: stats(name) for name in names}
        time.sleep(1.5)
        for name in names:
            later = stats(name)
            assert later["framesOutput"] > first[name]["framesOutput"], (name, first[name], later)
            assert later["widthPx"] == 640 and later["health"] == "ok", later
        for name in names:  # outlines = photos composited in colour; each is saved by the time the daemon exits
            wait_until(lambda: stats(name)["overlays"], 60, f"{name} colorizes a photo")
        for name in names:
            assert procs[name].poll() is None, (tmp_path / f"{name}.log").read_text()
            procs[name].send_signal(signal.SIGTERM)
        for name in names:
            procs[name].wait(timeout=20)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for name in names:
        log = (tmp_path / f"{name}.log").read_text()
        assert procs[name].returncode == 0, log
        assert f"preview at {bases[name]}/" in log, log
        instance = var_lib / "colorcam" / name
        assert sorted(p.name for p in instance.iterdir()) == ["photos", "traces"], list(instance.iterdir())
        saved = sorted(p.name for p in (instance / "photos").iterdir())
        assert any(n.endswith(".png") for n in saved) and any(n.endswith(".json") for n in saved), saved
        report = run(colorcam, "trace-report", instance / "traces" / "live.json", "--json", check=False)
        assert report.returncode in (0, 1), (report.stdout[-500:], report.stderr)  # 1: a timing threshold missed
        r = json.loads(report.stdout)
        assert r["frames"]["output"] > 0 and r["config"]["command"] == "live"
        assert r["config"]["trace_max_mb"] == (8 if name == "video2" else 64), r["config"]
