#!/usr/bin/env bash
# colorcam's V4L2 integration suite against the kernel's vivid driver, in ONE vivid-run VM boot.
#
#   Tests/vivid/run.sh            build colorcam (release) on the host, run Tests/vivid/guest.sh in the VM,
#                                 then judge the results on the host with Tests/vivid/check.py
#   VIVID_WORK=DIR                where outputs go (default .build/vivid-work; wiped first)
#   VIVID_RUN=PATH                the vivid-run script (default ../shared/vivid/vivid-run, else /work/shared/…)
#
# Exit: 0 all checks passed; 1 a check failed; 2 the suite could not run. If the VM cannot start (no qemu, no
# root, …) the suite is SKIPPED with a loud banner and exit 0 — set VIVID_REQUIRE=1 to make that exit 2 instead.
SUITE="vivid suite (no V4L2 capture test ran)"
# shellcheck source=Tests/vivid/common.sh
source "$(dirname "$0")/common.sh"

echo "vivid: building colorcam (release) on the host" >&2
swift build -c release --product colorcam >&2 || { echo "vivid: build failed" >&2; exit 2; }
COLORCAM=$ROOT/.build/release/colorcam

WORK=${VIVID_WORK:-$ROOT/.build/vivid-work}
rm -rf "$WORK"
mkdir -p "$WORK"
# The virtual-camera check's source: 10 s of ffmpeg's testsrc2 at 640x480 (every frame distinct: a counter and
# moving shapes), so each frame read back from the loop names the output frame it was.
ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc2=size=640x480:rate=30 -t 10 -pix_fmt yuv420p \
    "$WORK/v4l2out_src.y4m" || { echo "vivid: ffmpeg could not make the v4l2 output source clip" >&2; exit 2; }
echo "vivid: booting the VM (one boot for the whole suite, ~2-3 min under TCG)" >&2
start=$(date +%s)
bash "$VIVID_RUN" --workdir "$WORK" -- bash "$ROOT/Tests/vivid/guest.sh" "$WORK" "$COLORCAM" \
    > "$WORK/vivid-run.stdout" 2> "$WORK/vivid-run.stderr"
rc=$?
echo "vivid: VM run took $(( $(date +%s) - start )) s, exit $rc" >&2
if [ ! -f "$WORK/started" ]; then
    tail -5 "$WORK/vivid-run.stderr" >&2
    skip "the VM did not start (vivid-run exit $rc)"
fi
if [ $rc -ne 0 ] || [ ! -f "$WORK/finished" ]; then
    echo "vivid: the guest script did not finish (vivid-run exit $rc); stderr tail:" >&2
    tail -20 "$WORK/vivid-run.stderr" "$WORK/guest.stderr" >&2
    exit 2
fi
exec "$PYTHON" "$ROOT/Tests/vivid/check.py" "$WORK" "$COLORCAM"
