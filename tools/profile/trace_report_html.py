#!/usr/bin/env python3
"""Size and load time of the `trace-report --html` page for a 30-minute soak-sized trace (~500k events).

Writes the same synthetic trace as trace_report_load.py, then in one script:
  1. `colorcam trace-report --html` against its peer `colorcam trace-report` (text only) on the same trace:
     wall time of each and the ratio (the cost of building the page);
  2. the page's size against the trace's size;
  3. the page's load time in headless Chromium (`data-render-ms` the page sets after its first render: ms from
     navigation start, which includes parsing the embedded data) against its peer, the same page with the data
     cut to one minute (--minutes 1), and the wall time of each Chromium run.

usage: tools/profile/trace_report_html.py [--colorcam .build/release/colorcam] [--minutes 30]
Needs Debian's chromium (apt-get install -y chromium).
"""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_report_load import write_soak_trace  # noqa: E402


def cpu_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(command, **kwargs):
    """Runs command; returns (wall s, stdout, CPU s of the command). CPU time is the fairer figure on a shared
    machine, where wall time includes waiting for a core."""
    start, cpu = time.perf_counter(), cpu_children()
    proc = subprocess.run(command, capture_output=True, text=True, **kwargs)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{command[0]} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return elapsed, proc.stdout, cpu_children() - cpu


def open_in_chromium(chromium, page):
    """(wall s, data-render-ms, span elements) for one headless load of page."""
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
               "--virtual-time-budget=30000", "--dump-dom", "file://" + page]
    seconds, dom, _ = wall(command, timeout=600)
    match = re.search(r'data-render-ms="(\d+)"', dom)
    if not match or 'data-ready="1"' not in dom:
        sys.exit(f"chromium did not finish rendering {page}")
    return seconds, int(match.group(1)), len(re.findall(r'class="span[ "]', dom))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--colorcam", default=".build/release/colorcam")
    parser.add_argument("--minutes", type=float, default=30)
    args = parser.parse_args()
    if not os.path.exists(args.colorcam):
        sys.exit(f"{args.colorcam} not found: run `swift build -c release` first")
    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("chromium not found: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as tmp:
        trace, small = os.path.join(tmp, "soak.json"), os.path.join(tmp, "small.json")
        events = write_soak_trace(trace, args.minutes)
        write_soak_trace(small, 1)
        page, small_page = os.path.join(tmp, "soak.html"), os.path.join(tmp, "small.html")
        text_s, _, text_cpu = wall([args.colorcam, "trace-report", trace])
        html_s, _, html_cpu = wall([args.colorcam, "trace-report", trace, "--html", page])
        wall([args.colorcam, "trace-report", small, "--html", small_page])
        trace_mb, page_mb = os.path.getsize(trace) / 1048576, os.path.getsize(page) / 1048576
        big = open_in_chromium(chromium, page)
        peer = open_in_chromium(chromium, small_page)
        print(f"trace: {events} events, {trace_mb:.1f} MiB ({args.minutes:g} min at 30 fps)")
        print(f"trace-report text (peer): {text_s:.2f} s wall, {text_cpu:.2f} s CPU; with --html: {html_s:.2f} s "
              f"wall, {html_cpu:.2f} s CPU; ratio {html_s / text_s:.2f}x wall, {html_cpu / text_cpu:.2f}x CPU")
        print(f"page: {page_mb:.1f} MiB ({page_mb / trace_mb:.2f}x the trace)")
        print(f"chromium, {args.minutes:g}-min page: first render at {big[1]} ms, run {big[0]:.1f} s, "
              f"{big[2]} span elements (aggregated when 0)")
        print(f"chromium, 1-min page (peer): first render at {peer[1]} ms, run {peer[0]:.1f} s, "
              f"{peer[2]} span elements")
        print(f"ratio render {args.minutes:g} min / 1 min: {big[1] / max(1, peer[1]):.2f}x")


if __name__ == "__main__":
    main()
