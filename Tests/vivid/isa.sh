#!/usr/bin/env bash
# colorcam on a CPU without AVX: one vivid-run VM boot with QEMU's `Westmere` CPU model (SSE4.2, no AVX, AVX2, FMA
# or AVX-512), checking that the engine picks its baseline kernels by itself and computes what this host computes.
#
#   Tests/vivid/isa.sh      (make vivid runs it after run.sh)
#
# On the host: the detector CNN and the default colorizer run once natively on fixed inputs (`bench infer --input`).
# In the guest (Tests/vivid/guest_isa.sh): `colorcam doctor`, the same two runs, and COLORCAM_ISA=avx2 (which this
# CPU lacks: exit 69, not an illegal instruction). Then Tests/vivid/check_isa.py compares. Exit: 0 passed; 1 a check
# failed; 2 the suite could not run. A VM that cannot start is SKIPPED loudly (exit 0) unless VIVID_REQUIRE=1.
SUITE="no-AVX CPU check"
# shellcheck source=Tests/vivid/common.sh
source "$(dirname "$0")/common.sh"
swift build -c release --product colorcam >&2 || { echo "isa: build failed" >&2; exit 2; }
COLORCAM=$ROOT/.build/release/colorcam
WORK=${VIVID_WORK:-$ROOT/.build/vivid-isa}
rm -rf "$WORK"
mkdir -p "$WORK"
"$PYTHON" - "$WORK" <<'PY' || { echo "isa: could not write the inputs" >&2; exit 2; }
import sys
import numpy as np
rng = np.random.default_rng(5)
rng.uniform(-0.5, 0.5, (1, 3, 120, 160)).astype("<f4").tofile(f"{sys.argv[1]}/detect.in.f32")
rng.uniform(0, 100, (1, 1, 256, 256)).astype("<f4").tofile(f"{sys.argv[1]}/colorize.in.f32")
PY
for m in detect:Models/detect-default/model.onnx:1x3x120x160 colorize:Models/colorcam-default/model.onnx:1x1x256x256; do
    IFS=: read -r name model shape <<< "$m"
    "$COLORCAM" bench infer "$model" --shape "$shape" --input "$WORK/$name.in.f32" --output "$WORK/$name.host.f32" \
        > /dev/null || { echo "isa: the host run of $name failed" >&2; exit 2; }
done
echo "isa: booting a VM whose CPU has no AVX (QEMU -cpu Westmere)" >&2
VIVID_RUN_QEMU_CPU=Westmere bash "$VIVID_RUN" --workdir "$WORK" -- bash "$ROOT/Tests/vivid/guest_isa.sh" "$WORK" \
    "$COLORCAM" "$ROOT" > "$WORK/vivid-run.stdout" 2> "$WORK/vivid-run.stderr"
rc=$?
[ -f "$WORK/started" ] || { tail -5 "$WORK/vivid-run.stderr" >&2; skip "the VM did not start (vivid-run exit $rc)"; }
if [ $rc -ne 0 ] || [ ! -f "$WORK/finished" ]; then
    echo "isa: the guest script did not finish (vivid-run exit $rc)" >&2
    tail -20 "$WORK/vivid-run.stderr" >&2
    exit 2
fi
exec "$PYTHON" "$ROOT/Tests/vivid/check_isa.py" "$WORK"
