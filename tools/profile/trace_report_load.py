#!/usr/bin/env python3
"""Load-time benchmark for `colorcam trace-report` on a 30-minute soak-sized trace (~500k events).

Writes a synthetic colorcam trace (30 fps for --minutes, every event kind of TRACE-FORMAT.md) to a temp file, then
times `colorcam trace-report --json` against a peer in the same script: Python's json.load of the same file (which
only parses, computing nothing). Prints events, size, wall and CPU time and peak RSS of each, and the ratios (CPU
time is the steadier figure on a shared machine).

usage: tools/profile/trace_report_load.py [--colorcam .build/release/colorcam] [--minutes 30]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def write_soak_trace(path, minutes):
    frames = int(minutes * 60 * 30)
    with open(path, "w") as f:
        f.write('[{"name":"process_name","ph":"M","pid":1,"args":{"name":"colorcam"}}\n')
        f.write(',{"name":"config","ph":"i","s":"g","pid":1,"tid":6,"ts":0,"args":{"command":"replay",'
                '"source":"soak.y4m","pace":"realtime","source_fps":30,"max_in_flight":1,"queue":1,'
                '"model":"sim","simulated":true,"simulate_inference_ms":45,"simulate_jitter_ms":5,'
                '"simulate_mode":"fixed","output_deadline_us":100000}}\n')
        events = 2
        worker_free = 0
        for frame in range(frames):
            ts = frame * 1_000_000 // 30
            lines = [
                f'{{"name":"capture","ph":"X","pid":1,"tid":1,"ts":{ts},"dur":150,"args":{{"frame":{frame},"capture_ts_us":{ts}}}}}',
                f'{{"name":"frame","ph":"s","pid":1,"tid":1,"ts":{ts + 150},"id":{frame},"cat":"frame"}}',
                f'{{"name":"detect","ph":"X","pid":1,"tid":2,"ts":{ts + 200},"dur":900,"args":{{"frame":{frame},"photos":1}}}}',
                f'{{"name":"queue_depth","ph":"C","pid":1,"tid":6,"ts":{ts + 1100},"args":{{"value":1}}}}',
            ]
            if ts + 1100 >= worker_free:
                start = ts + 1150
                worker_free = start + 45_000
                lines.append(f'{{"name":"in_flight","ph":"C","pid":1,"tid":6,"ts":{start},"args":{{"value":1}}}}')
                lines.append(f'{{"name":"infer","ph":"X","pid":1,"tid":3,"ts":{start},"dur":45000,"args":{{"frame":{frame},'
                             f'"requested_ts_us":{ts + 1100},"lag_us":50,"queued_us":0,"simulated":true}}}}')
                lines.append(f'{{"name":"in_flight","ph":"C","pid":1,"tid":6,"ts":{worker_free},"args":{{"value":0}}}}')
            else:
                lines.append(f'{{"name":"drop","ph":"i","s":"t","pid":1,"tid":1,"ts":{ts + 1100},"args":{{"frame":{frame},"reason":"superseded"}}}}')
            lines += [
                f'{{"name":"composite","ph":"X","pid":1,"tid":4,"ts":{ts + 1200},"dur":800,"args":{{"frame":{frame},"result_frame":{max(frame - 2, -1)}}}}}',
                f'{{"name":"output","ph":"X","pid":1,"tid":5,"ts":{ts + 2000},"dur":300,"args":{{"frame":{frame},'
                f'"result_frame":{max(frame - 2, -1)},"result_age_us":66666,"latency_us":2300}}}}',
                f'{{"name":"frame","ph":"f","bp":"e","pid":1,"tid":5,"ts":{ts + 2000},"id":{frame},"cat":"frame"}}',
            ]
            f.write("".join("," + line + "\n" for line in lines))
            events += len(lines)
        f.write(f',{{"name":"summary","ph":"i","s":"g","pid":1,"tid":6,"ts":{frames * 33334},'
                f'"args":{{"frames_captured":{frames},"frames_output":{frames},"trace_events_lost":0}}}}\n]\n')
        return events + 1


# Runs argv[1:] in a fresh interpreter so RUSAGE_CHILDREN's high-water mark is that command's alone.
WRAPPER = """import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, code)
"""


def timed(command):
    """Runs command; returns (wall s, CPU s, peak RSS MiB of that command, exit code)."""
    result = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True)
    wall, cpu, rss_kib, code = result.stdout.split()
    if int(code) not in (0, 1):
        sys.exit(f"{command[0]} failed ({code}): {result.stderr.strip()}")
    return float(wall), float(cpu), int(rss_kib) / 1024, int(code)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--colorcam", default=".build/release/colorcam")
    parser.add_argument("--minutes", type=float, default=30)
    args = parser.parse_args()
    if not os.path.exists(args.colorcam):
        sys.exit(f"{args.colorcam} not found: run `swift build -c release` first")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "soak.json")
        events = write_soak_trace(path, args.minutes)
        size_mb = os.path.getsize(path) / 1048576
        peer_s, peer_cpu, peer_rss, _ = timed([sys.executable, "-c", f"import json; json.load(open({path!r}))"])
        ours_s, ours_cpu, ours_rss, code = timed([args.colorcam, "trace-report", "--json", path])
        print(f"trace: {events} events, {size_mb:.1f} MiB ({args.minutes:g} min at 30 fps)")
        print(f"python json.load (peer): {peer_s:.2f} s wall, {peer_cpu:.2f} s CPU, peak RSS {peer_rss:.0f} MiB")
        print(f"colorcam trace-report:   {ours_s:.2f} s wall, {ours_cpu:.2f} s CPU, peak RSS {ours_rss:.0f} MiB"
              f" (exit {code})")
        print(f"ratio colorcam/peer: CPU {ours_cpu / peer_cpu:.2f}x, wall {ours_s / peer_s:.2f}x, "
              f"RSS {ours_rss / peer_rss:.2f}x")


if __name__ == "__main__":
    main()
