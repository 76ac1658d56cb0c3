#!/usr/bin/env python3
"""Load test for the live preview: N concurrent MJPEG clients plus one client reading at ~1 KB/s.

Against a running server (`--url http://127.0.0.1:PORT/ --pid PID`, e.g. `colorcam live`), or, by default, against
`preview-harness` (synthetic 640x480 frames at 30 fps), which this script starts and stops itself.

Prints per-client fps (mean and worst 1-s window), the slow client's bytes, server RSS growth over the run, and the
publisher's achieved fps (from the harness summary, or from /stats.json samples for an external server).
Exit status 0 when every figure meets the issue's acceptance (fast clients >= 25 fps, RSS growth <= 5 MB, publisher
worst 1-s window >= 29.5 fps), 1 otherwise. Loopback addresses only; every loop is bounded by the duration.
"""
import argparse
import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worst_window(times, start, end):
    """Fewest events in any window [t, t + 1 s) with t an event time in [start, end - 1]."""
    inside = [t for t in times if start <= t < end]
    worst = None
    j = 0
    for i, t in enumerate(inside):
        if t + 1.0 > end:
            break
        while j < len(inside) and inside[j] < t + 1.0:
            j += 1
        worst = j - i if worst is None else min(worst, j - i)
    return worst


class StreamClient(threading.Thread):
    """Reads /stream.mjpg as fast as it can, recording each complete part's arrival time."""

    def __init__(self, host, port, deadline, name):
        super().__init__(name=name, daemon=True)
        self.host, self.port, self.deadline = host, port, deadline
        self.frame_times = []
        self.bad_parts = 0
        self.error = None

    def run(self):
        try:
            sock = socket.create_connection((self.host, self.port), timeout=5)
            sock.sendall(b"GET /stream.mjpg HTTP/1.1\r\nHost: load\r\n\r\n")
            buf = bytearray()
            head_done = False
            while time.monotonic() < self.deadline:
                chunk = sock.recv(262144)
                if not chunk:
                    raise RuntimeError("server closed the stream")
                buf += chunk
                while True:
                    if not head_done:
                        end = buf.find(b"\r\n\r\n")
                        if end < 0:
                            break
                        if not buf.startswith(b"HTTP/1.1 200"):
                            raise RuntimeError(f"bad response head {bytes(buf[:40])!r}")
                        del buf[:end + 4]
                        head_done = True
                        continue
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        break
                    headers = bytes(buf[:end]).decode("latin-1").split("\r\n")
                    length = next(int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:"))
                    if len(buf) < end + 4 + length + 2:
                        break
                    jpeg = buf[end + 4:end + 4 + length]
                    if jpeg[:2] != b"\xff\xd8" or jpeg[-2:] != b"\xff\xd9":
                        self.bad_parts += 1
                    del buf[:end + 4 + length + 2]
                    self.frame_times.append(time.monotonic())
            sock.close()
        except Exception as error:  # reported in the summary, fails the run
            self.error = f"{type(error).__name__}: {error}"


class SlowClient(threading.Thread):
    """Reads /stream.mjpg at about `rate` bytes per second (128-byte reads, paced)."""

    def __init__(self, host, port, deadline, rate):
        super().__init__(name="slow", daemon=True)
        self.host, self.port, self.deadline, self.rate = host, port, deadline, rate
        self.bytes = 0
        self.error = None

    def run(self):
        try:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(5)
            sock.connect((self.host, self.port))
            sock.sendall(b"GET /stream.mjpg HTTP/1.1\r\nHost: slow\r\n\r\n")
            start = time.monotonic()
            while time.monotonic() < self.deadline:
                chunk = sock.recv(128)
                if not chunk:
                    raise RuntimeError("server closed the slow stream")
                self.bytes += len(chunk)
                due = start + self.bytes / self.rate
                time.sleep(max(0.0, min(due - time.monotonic(), self.deadline - time.monotonic())))
            sock.close()
        except Exception as error:
            self.error = f"{type(error).__name__}: {error}"


def harness_summary(harness):
    """Stops the harness and returns its summary fields."""
    harness.send_signal(signal.SIGTERM)
    summary = harness.communicate(timeout=20)[0].strip().splitlines()
    return dict(kv.split("=") for kv in summary[-1].split()[1:]) if summary else {}


def start_harness(path, seconds):
    harness = subprocess.Popen([path, "--listen", "127.0.0.1:0", "--seconds", str(seconds)],
                               stdout=subprocess.PIPE, text=True)
    line = harness.stdout.readline()
    if not line.startswith("listening on "):
        harness.kill()
        sys.exit(f"harness did not start: {line!r}")
    return harness, urllib.parse.urlparse(line.split()[2])


def baseline(path, seconds):
    """The peer: the same harness publishing for the same time with no client connected."""
    harness, _ = start_harness(path, seconds + 5)
    time.sleep(seconds)
    return harness_summary(harness)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server, e.g. http://127.0.0.1:8080/ (default: start the harness)")
    parser.add_argument("--pid", type=int, help="the running server's pid, for RSS (with --url)")
    parser.add_argument("--harness", default=os.path.join(ROOT, ".build/release/preview-harness"))
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring starts")
    parser.add_argument("--slow-rate", type=float, default=1024.0, help="slow client's bytes per second")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the peer run (harness with no clients) that the loaded figures are compared with")
    args = parser.parse_args()
    if not (1 <= args.clients <= 200 and 1 <= args.seconds <= 600):
        parser.error("--clients must be 1..200 and --seconds 1..600")

    harness = None
    if args.url:
        url = urllib.parse.urlparse(args.url)
        pid = args.pid
    else:
        if not os.path.exists(args.harness):
            sys.exit(f"{args.harness} not found: run 'swift build -c release --product preview-harness'")
        peer = None if args.no_baseline else baseline(args.harness, args.warmup + args.seconds)
        harness, url = start_harness(args.harness, args.warmup + args.seconds + 5)
        pid = harness.pid
    host, port = url.hostname, url.port
    if not ipaddress.ip_address(socket.gethostbyname(host)).is_loopback:
        sys.exit(f"refusing non-loopback host {host}: this load test only runs against this machine")

    start = time.monotonic()
    deadline = start + args.warmup + args.seconds
    measure_from = start + args.warmup
    fast = [StreamClient(host, port, deadline, f"fast{i}") for i in range(args.clients)]
    slow = SlowClient(host, port, deadline, args.slow_rate)
    for client in fast + [slow]:
        client.start()
    stats_fps = []
    rss_start = cpu_start = None
    while time.monotonic() < deadline:
        now = time.monotonic()
        if rss_start is None and now >= measure_from and pid:
            rss_start = rss_kb(pid)
            cpu_start = cpu_seconds(pid)
        if now >= measure_from:
            try:
                with urllib.request.urlopen(f"http://{host}:{port}/stats.json", timeout=2) as response:
                    stats_fps.append(json.load(response)["outputFps"])
            except Exception as error:
                print(f"stats.json failed: {error}")
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    rss_end = rss_kb(pid) if pid else None
    cpu_end = cpu_seconds(pid) if pid else None
    metrics = ""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as response:
            metrics = response.read().decode()
    except Exception as error:
        print(f"/metrics failed: {error}")
    for client in fast + [slow]:
        client.join(timeout=10)

    ok = True
    print(f"preview load: {args.clients} MJPEG clients + 1 at {args.slow_rate:.0f} B/s for {args.seconds:.0f} s "
          f"against {host}:{port}")
    worst_client = None
    for client in fast:
        frames = [t for t in client.frame_times if measure_from <= t < deadline]
        fps = len(frames) / args.seconds
        window = worst_window(client.frame_times, measure_from, deadline)
        worst_client = fps if worst_client is None else min(worst_client, fps)
        flag = "" if fps >= 25 and not client.error and not client.bad_parts else "  <-- FAIL"
        ok &= not flag
        print(f"  {client.name:>6}: {fps:6.2f} fps, worst 1-s window {window} frames, bad parts {client.bad_parts}"
              f"{', error ' + client.error if client.error else ''}{flag}")
    print(f"  slow client: {slow.bytes} bytes in {args.warmup + args.seconds:.0f} s"
          f"{', error ' + slow.error if slow.error else ''}")
    ok &= slow.error is None
    if rss_start is not None and rss_end is not None:
        growth_mb = (rss_end - rss_start) / 1024
        print(f"  server RSS: {rss_start / 1024:.1f} MB -> {rss_end / 1024:.1f} MB, growth {growth_mb:+.2f} MB"
              f"{'' if growth_mb <= 5 else '  <-- FAIL'}")
        ok &= growth_mb <= 5
    if rss_start is not None and cpu_end is not None:
        print(f"  server CPU: {100 * (cpu_end - cpu_start) / args.seconds:.1f}% of one core "
              f"(publisher + preview event loop)")
    sample = {line.split(" ")[0]: float(line.split(" ")[1]) for line in metrics.splitlines()
              if line.startswith("colorcam_preview_encode_seconds_") and " " in line}
    if sample.get("colorcam_preview_encode_seconds_count"):
        count = sample["colorcam_preview_encode_seconds_count"]
        print(f"  preview JPEG encode: {1000 * sample['colorcam_preview_encode_seconds_sum'] / count:.2f} ms mean "
              f"over {count:.0f} frames")
    if stats_fps:
        print(f"  /stats.json outputFps: min {min(stats_fps):.2f}, mean {sum(stats_fps) / len(stats_fps):.2f}")
    if harness:
        fields = harness_summary(harness)
        worst = int(fields.get("worst_window_frames", -1))
        if peer:
            print(f"  peer (no clients): {float(peer.get('fps', 0)):.3f} fps, worst 1-s window "
                  f"{peer.get('worst_window_frames')} frames, publish call p99 {peer.get('p99_publish_us')} us, "
                  f"max {peer.get('max_publish_us')} us")
            ratio = float(fields.get("p99_publish_us", 0)) / max(1.0, float(peer.get("p99_publish_us", 1)))
            print(f"  loaded / peer: publish p99 x{ratio:.2f}, fps x"
                  f"{float(fields.get('fps', 0)) / max(1e-9, float(peer.get('fps', 1))):.4f}")
        print(f"  publisher (loaded): {float(fields.get('fps', 0)):.3f} fps achieved, worst 1-s window {worst} frames, "
              f"publish call p99 {fields.get('p99_publish_us', '?')} us, max {fields.get('max_publish_us', '?')} us{'' if worst >= 30 else '  <-- FAIL'}")
        ok &= worst >= 30
    print(f"  fast clients: min {worst_client:.2f} fps" if worst_client is not None else "  no fast clients")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
