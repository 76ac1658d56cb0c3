#!/usr/bin/env python3
"""End-to-end replay benchmark: `colorcam replay --pace realtime` with a chosen model on a scene, printing output fps,
request→start lag, capture→output latency, CPU per frame and RSS over time (peak, after the first minute, at the end).

usage: tools/profile/e2e.py [--model default|eccv16|PATH] [--preset P] [--scene demo/scene.y4m] [--loop N]
                            [--background gray|original] [--output OUT.y4m] [--keep DIR]

--model eccv16 builds the ECCV16-architecture colorizer with random weights (tools/conformance/models.py: about
32 M parameters, 83.5 GFLOP at 256²) — 25× slower than a frame period on this machine; timing only.
--loop N plays the scene N times (10 s each): a 5-minute run is --loop 30.
Needs a release build (make release) and the scene (make demo renders demo/scene.y4m, or tools/demo/scene.py).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("COLORCAM", os.path.join(ROOT, ".build/release/colorcam"))


def eccv16_model(cache_dir):
    path = os.path.join(cache_dir, "eccv16_256.onnx")
    if not os.path.exists(path):
        sys.path.insert(0, os.path.join(ROOT, "tools/conformance"))
        import onnx
        import models
        _, model, _ = models.eccv16()
        os.makedirs(cache_dir, exist_ok=True)
        onnx.save(model, path + ".partial")
        os.replace(path + ".partial", path)
    return path


def proc_status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def open_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def require_inputs(tool, scene):
    """Exits with a one-line message naming what is missing: the release binary or the scene file."""
    if not os.path.exists(BIN):
        sys.exit(f"{tool}: {BIN} not found (make release)")
    if not os.path.exists(scene):
        sys.exit(f"{tool}: {scene}: no such scene (make demo, or python3 tools/demo/scene.py --out {scene})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="default")
    ap.add_argument("--preset")
    ap.add_argument("--scene", default=os.path.join(ROOT, "demo/scene.y4m"))
    ap.add_argument("--loop", type=int, default=1)
    ap.add_argument("--background", default="gray")
    ap.add_argument("--output")
    ap.add_argument("--keep", help="keep the trace here (default: a temporary directory)")
    args = ap.parse_args()
    require_inputs("e2e", args.scene)

    work = args.keep or tempfile.mkdtemp(prefix="colorcam-e2e-")
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "trace.json")
    cmd = [BIN, "replay", args.scene, "--pace", "realtime", "--trace", trace, "--background", args.background,
           "--loop", str(args.loop), "--quiet"]
    preset = args.preset
    if args.model == "eccv16":
        cmd += ["--model", eccv16_model(os.path.join(ROOT, ".build/profile")), "--preset", "eccv16"]
    elif args.model != "default":
        cmd += ["--model", args.model] + (["--preset", preset] if preset else [])
    if args.output:
        cmd += ["--output", args.output]
    print("e2e:", " ".join(cmd), flush=True)

    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    samples = []  # (seconds, rss_kb, fds)
    while proc.poll() is None:
        rss, fds = proc_status_kb(proc.pid, "VmRSS"), open_fds(proc.pid)
        if rss is not None:
            samples.append((time.monotonic() - start, rss, fds))
        if len(samples) % 30 == 0 and samples:
            print(f"  {samples[-1][0]:6.0f} s  RSS {samples[-1][1] / 1024:7.1f} MB  fds {samples[-1][2]}", flush=True)
        time.sleep(1.0)
    status = proc.returncode
    wall = time.monotonic() - start
    if status != 0:
        sys.exit(f"e2e: colorcam replay exited {status}")
    # CPU of the finished child (all threads): RUSAGE_CHILDREN of this script.
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(subprocess.run([BIN, "trace-report", trace, "--json"], capture_output=True, text=True).stdout)
    frames = report["frames"]["output"]
    cpu_s = ru.ru_utime + ru.ru_stime
    peak_kb = ru.ru_maxrss
    after_minute = [s for s in samples if s[0] >= 60]
    fps = report["output_fps"]
    inf = report["inference"]
    print(f"model: {report['config'].get('model')}  frames output {frames}  wall {wall:.1f} s")
    print(f"output fps: mean {fps['mean']:.2f}, worst 1-s window {fps['worst_1s_window_frames']} frames")
    print(f"in flight max: {report['in_flight']['max']}")
    print(f"inference: {inf['count']} runs, duration p50 {inf['duration_us']['p50'] / 1000:.1f} ms")
    print(f"request→start lag: p99 {inf['lag_us']['p99'] / 1000:.3f} ms, max {inf['lag_us']['max'] / 1000:.3f} ms")
    print(f"capture→output latency: p50 {report['latency_us']['p50'] / 1000:.1f} ms, "
          f"p99 {report['latency_us']['p99'] / 1000:.1f} ms")
    print(f"result age: p50 {report['result_age_us']['p50'] / 1000:.0f} ms")
    print(f"drops: " + ", ".join(f"{k} {v}" for k, v in report["drops"].items()))
    print(f"CPU: {cpu_s:.1f} s total, {1000 * cpu_s / max(frames, 1):.2f} ms per output frame "
          f"({100 * cpu_s / wall:.0f} % of one core)")
    print(f"peak RSS: {peak_kb / 1024:.1f} MB")
    if after_minute:
        first, last = after_minute[0], samples[-1]
        growth = (max(s[1] for s in after_minute) - first[1]) / 1024
        fds = sorted({s[2] for s in after_minute if s[2] is not None})
        print(f"RSS after the first minute: {first[1] / 1024:.1f} MB at {first[0]:.0f} s → {last[1] / 1024:.1f} MB "
              f"at {last[0]:.0f} s (max growth {growth:+.1f} MB); open fds {fds}")
    print(f"verdict line: {report['verdict']['line']}")
    print(f"trace: {trace}")


if __name__ == "__main__":
    main()
