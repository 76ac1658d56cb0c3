#!/usr/bin/env python3
"""Builds and runs colorcam's libFuzzer targets for a chosen time and reports executions, coverage and crashes.

    tools/fuzz/run.py [--seconds N] [--target NAME ...] [--jobs J] [--no-build]

Targets: y4m (Y4MSource), onnx (ONNXModel.decode), onnx-graph (decode + InferenceEngine graph building), trace
(TraceReport as trace-report loads it), http (HTTPRequestParser). Each run starts from the generated seeds
(tools/fuzz/seeds.py → .build/fuzz/seeds/NAME) plus the corpus earlier runs grew (.build/fuzz/corpus/NAME), with the
dictionary tools/fuzz/dicts/NAME.dict if present.
Prints one line per target: executions, exec/s, libFuzzer `cov:` (edges) and `ft:` (features), corpus size, peak
RSS and crashes. A crash (trap, ASan report, leak, timeout, OOM) stops that target; its input is left in
.build/fuzz/artifacts/ and the exit status is 1. Exit 0 when every target ran its time without a crash.
The log of each target is .build/fuzz/logs/NAME.log.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TARGETS = ["y4m", "onnx", "onnx-graph", "trace", "http", "infer-response"]
# What runs without --target (make fuzz, make test). onnx-graph is opt-in: graph building is a much larger surface
# than the five parsers, and its findings are not all fixed yet (tools/fuzz/README.md).
DEFAULT_TARGETS = ["y4m", "onnx", "trace", "http", "infer-response"]
# Targets that share another's seeds.
SEEDS = {"onnx-graph": "onnx"}


def build_dir():
    return os.environ.get("FUZZ_BUILD", os.path.join(ROOT, ".build", "fuzz"))


def findings(artifacts, name):
    """Inputs libFuzzer left for target `name` that are failures (not `slow-unit-`, which only reports time)."""
    kinds = ("crash-", "leak-", "timeout-", "oom-", "deadly-signal-")
    return {f for f in os.listdir(artifacts) if f.startswith(name + "-") and f[len(name) + 1:].startswith(kinds)}


def run_target(name, seconds, out):
    """Runs one target for `seconds`; returns a dict of its figures."""
    corpus = os.path.join(out, "corpus", name)
    seeds = os.path.join(out, "seeds", SEEDS.get(name, name))
    artifacts = os.path.join(out, "artifacts")
    logs = os.path.join(out, "logs")
    for d in (corpus, artifacts, logs):
        os.makedirs(d, exist_ok=True)
    before = findings(artifacts, name)
    # -timeout is wall time per input: generous, as a busy shared machine has stalled whole processes for two
    # minutes (inputs that then rerun in 0.1 s); a real hang still fails.
    command = [os.path.join(out, "fuzz-" + name), f"-max_total_time={seconds}", "-print_final_stats=1",
               "-timeout=300", "-report_slow_units=300", "-rss_limit_mb=2048", "-max_len=65536",
               f"-artifact_prefix={artifacts}/{name}-"]
    dictionary = os.path.join(ROOT, "tools", "fuzz", "dicts", name + ".dict")
    if os.path.exists(dictionary):
        command.append(f"-dict={dictionary}")
    command += [corpus, seeds]
    log_path = os.path.join(logs, name + ".log")
    started = time.monotonic()
    with open(log_path, "w") as log:
        # Swift's own crash backtracer fights ASan's signal handling; let libFuzzer/ASan report traps.
        env = dict(os.environ, SWIFT_BACKTRACE="enable=no")
        status = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=out, env=env).returncode
    elapsed = time.monotonic() - started
    text = open(log_path, errors="replace").read()
    figures = {"name": name, "status": status, "log": log_path, "elapsed": elapsed}
    for key, stat in (("execs", "number_of_executed_units"), ("exec_s", "average_exec_per_sec"),
                      ("rss_mb", "peak_rss_mb")):
        found = re.findall(rf"stat::{stat}:\s*(\d+)", text)
        figures[key] = int(found[-1]) if found else None
    status_lines = re.findall(r"^#(\d+)\s+\S+\s+cov: (\d+) ft: (\d+) corp: (\d+)/", text, re.M)
    if status_lines:
        last = status_lines[-1]
        figures.update(cov=int(last[1]), ft=int(last[2]), corpus=int(last[3]))
        if figures["execs"] is None:
            figures["execs"] = int(last[0])
    figures["crashes"] = sorted(findings(artifacts, name) - before)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=30, help="fuzzing time per target (default 30)")
    parser.add_argument("--target", action="append", choices=TARGETS,
                        help="a target to run (repeatable; default: " + " ".join(DEFAULT_TARGETS) + ")")
    parser.add_argument("--jobs", type=int, default=1, help="targets run at the same time (default 1)")
    parser.add_argument("--no-build", action="store_true", help="use the binaries already in .build/fuzz")
    args = parser.parse_args()
    targets = args.target or DEFAULT_TARGETS
    out = build_dir()
    if not args.no_build:
        subprocess.run([os.path.join(ROOT, "tools", "fuzz", "build.sh"), *targets], check=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fuzz", "seeds.py"), os.path.join(out, "seeds")],
                   check=True)
    print(f"== fuzzing {', '.join(targets)} for {args.seconds} s each ({args.jobs} at a time)", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda t: run_target(t, args.seconds, out), targets))
    failed = False
    for r in results:
        def show(key):
            return "?" if r.get(key) is None else str(r[key])
        line = (f"{r['name']:6} execs {show('execs'):>10}  exec/s {show('exec_s'):>6}  cov {show('cov'):>5}  "
                f"ft {show('ft'):>6}  corpus {show('corpus'):>5}  rss {show('rss_mb')} MB  "
                f"crashes {len(r['crashes'])}")
        print(line)
        if r["crashes"] or r["status"] != 0:
            failed = True
            for artifact in r["crashes"]:
                print(f"   crashing input: {os.path.join(out, 'artifacts', artifact)}")
            if not r["crashes"]:
                print(f"   exit status {r['status']} without an artifact; see {r['log']}")
            print(f"   log: {r['log']}")
            summary = [l for l in open(r["log"], errors="replace") if "ERROR:" in l or "Fatal error" in l]
            for l in summary[:3]:
                print("   " + l.rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
