#!/usr/bin/env python3
"""The real-time verdict of `colorcam live` while hints are added through the preview's JSON API (issue #28).

    python3 tools/profile/hints_live_realtime.py [--colorcam .build/release/colorcam] [--source demo/scene.y4m]
        [--seconds 20] [--every-s 0.5] [--trace OUT.json]

Runs `colorcam live --source SOURCE --trace OUT.json` (the file looped at real time, as the demo's replay) and, from
the second second on, POSTs a hint every EVERY_S seconds to a photo in view (`GET /photos`), at a random point
inside it (frame pixels) with a random colour; every fifth request removes one instead and every seventh moves one.
Then SIGINT, and `colorcam trace-report OUT.json` with the demo's real-time limits (lag p99 <= 1 ms, worst 1-s window
>= 29.5 fps, capture-to-output latency p99 <= 50 ms, at most one inference in flight). Prints the API's answers by
status, the report, and the trace's `infer` reasons (one inference at a time: `hint` among them).
"""
import argparse
import collections
import json
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def call(url, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, method=method, data=data,
                                     headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--colorcam", default=".build/release/colorcam")
    ap.add_argument("--source", default="demo/scene.y4m")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--every-s", type=float, default=0.5)
    ap.add_argument("--trace", default="/tmp/hints-live-trace.json")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    live = subprocess.Popen([args.colorcam, "live", "--source", args.source, "--listen", f"127.0.0.1:{port}",
                             "--trace", args.trace], stderr=subprocess.PIPE, text=True)
    for line in live.stderr:
        if "preview at" in line:
            break
    start = time.monotonic()
    statuses = collections.Counter()
    request = 0
    time.sleep(1)
    while time.monotonic() - start < args.seconds:
        request += 1
        code, photos = call(url, "GET", "/photos")
        visible = [p for p in photos["photos"] if p["inView"]] if code == 200 else []
        if visible:
            photo = rng.choice(visible)
            xs, ys = [c[0] for c in photo["corners"]], [c[1] for c in photo["corners"]]
            # A point well inside: a mix of the corners with weights away from the edges.
            w = [rng.uniform(0.5, 1.5) for _ in range(4)]
            x, y = (sum(a * b for a, b in zip(w, xs)) / sum(w), sum(a * b for a, b in zip(w, ys)) / sum(w))
            colour = "#%06x" % rng.randrange(1 << 24)
            if request % 5 == 0 and photo["hints"]:
                code, _ = call(url, "DELETE", f"/photos/{photo['id']}/hints/{photo['hints'][0]['id']}")
                statuses[f"DELETE {code}"] += 1
            elif request % 7 == 0 and photo["hints"]:
                code, _ = call(url, "PUT", f"/photos/{photo['id']}/hints/{photo['hints'][-1]['id']}",
                               {"x": x, "y": y})
                statuses[f"PUT {code}"] += 1
            else:
                code, _ = call(url, "POST", f"/photos/{photo['id']}/hints", {"x": x, "y": y, "color": colour})
                statuses[f"POST {code}"] += 1
        time.sleep(args.every_s)
    live.send_signal(signal.SIGINT)
    rest = live.communicate(timeout=60)[1]
    summary = [l for l in rest.splitlines() if "stopped:" in l]
    print(f"live exited {live.returncode}; {summary[-1] if summary else ''}")
    print("API answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    report = subprocess.run([args.colorcam, "trace-report", args.trace, "--max-lag-ms", "1", "--min-fps", "29.5",
                             "--max-latency-ms", "50"], capture_output=True, text=True)
    print(report.stdout.strip())
    events = json.load(open(args.trace))
    events = events["traceEvents"] if isinstance(events, dict) else events
    reasons = collections.Counter(e["args"]["reason"] for e in events if e.get("name") == "infer")
    print("infer reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    return 0 if live.returncode == 0 and report.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
