"""Judges Tests/vivid/isa.sh's guest run (a CPU without AVX): the engine chose its baseline kernels from the CPU
flags, computed the detector CNN and the colorizer as the host did (max |guest − host| ≤ 1e-4·max(1, |host|)), and
refused COLORCAM_ISA=avx2 with exit 69 and a one-line reason. usage: check_isa.py WORK"""
import sys

import numpy as np

work = sys.argv[1]
failures = []


def read(name):
    with open(f"{work}/{name}") as f:
        return f.read()


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


flags = set(read("cpuinfo_flags.txt").split(":", 1)[1].split())
check("avx" not in flags and "avx2" not in flags and "sse2" in flags,
      f"the guest CPU has SSE2 but no AVX ({len(flags)} flags)")
doctor = read("doctor.out")
kernels = [line for line in doctor.splitlines() if line.startswith("kernels")]
check(read("doctor.rc").strip() == "0" and kernels and kernels[0].startswith("kernels    baseline: chosen from CPU flags"),
      f"doctor: {kernels[0] if kernels else 'no kernels line: ' + read('doctor.err').strip()}")
for name in ["detect", "colorize"]:
    rc = read(f"{name}.rc").strip()
    if rc != "0":
        check(False, f"{name}: exit {rc}: {read(name + '.err').strip()[-300:]}")
        continue
    host = np.fromfile(f"{work}/{name}.host.f32", dtype="<f4").astype(np.float64)
    guest = np.fromfile(f"{work}/{name}.guest.f32", dtype="<f4").astype(np.float64)
    same_size = guest.size == host.size and host.size > 0
    worst = float(np.max(np.abs(guest - host) / np.maximum(1, np.abs(host)))) if same_size else float("inf")
    check(same_size and worst <= 1e-4, f"{name}: {guest.size} values, worst relative difference from the host {worst:.2e}")
forced = read("forced_avx2.out")
line = [l for l in forced.splitlines() if l.startswith("kernels")]
check(read("forced_avx2.rc").strip() == "69" and line and "lacks" in line[0],
      f"COLORCAM_ISA=avx2 on this CPU: exit {read('forced_avx2.rc').strip()}: {line[0] if line else forced.strip()}")
print("no-AVX CPU check:", "PASSED" if not failures else f"{len(failures)} FAILED")
sys.exit(1 if failures else 0)
