#!/usr/bin/env bash
# How many of the frames `colorcam live --v4l2-output` writes arrive at a reader of vivid's looped capture node, in
# one vivid-run VM boot: ROUNDS rounds (default 8, alternating YUYV and YU12), each read for SECONDS (default 4).
# Prints one line per round (the figure #29 asks for: ≥ 95 % of output frames, in order, unchanged) and the mean.
#   tools/profile/v4l2out_arrival.sh [ROUNDS] [SECONDS]      (builds colorcam release first)
#   COLORCAM=PATH tools/profile/v4l2out_arrival.sh …         (another build, e.g. an older commit's, as is)
set -uo pipefail
ROUNDS=${1:-8}
SECS=${2:-4}
SUITE="v4l2 output arrival"
# shellcheck source=Tests/vivid/common.sh
source "$(dirname "$0")/../../Tests/vivid/common.sh"
if [ -z "${COLORCAM:-}" ]; then
    swift build -c release --product colorcam >&2 || exit 2
    COLORCAM=$ROOT/.build/release/colorcam
fi
WORK=${VIVID_WORK:-$ROOT/.build/v4l2out-arrival}
rm -rf "$WORK"
mkdir -p "$WORK"
ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc2=size=640x480:rate=30 -t 10 -pix_fmt yuv420p \
    "$WORK/src.y4m" || exit 2
bash "$VIVID_RUN" --workdir "$WORK" -- bash "$ROOT/tools/profile/v4l2out_arrival_guest.sh" "$WORK" \
    "$COLORCAM" "$WORK/src.y4m" "$ROUNDS" "$SECS" > "$WORK/vm.out" 2> "$WORK/vm.err"
[ -f "$WORK/finished" ] || { tail -20 "$WORK/vm.err" >&2; exit 2; }
exec "$PYTHON" - "$WORK" "$ROUNDS" "$ROOT/Tests/vivid" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[3])
from check_v4l2out import align, losses, reader_sequences
work, rounds = sys.argv[1], int(sys.argv[2])
figures = []
for r in range(1, rounds + 1):
    fmt = open(os.path.join(work, f"r{r}.fmt")).read().strip()
    sent = [l.split()[0] for l in open(os.path.join(work, f"r{r}_sent.txt")) if l.strip()]
    back = [l.split()[0] for l in open(os.path.join(work, f"r{r}_back.txt")) if l.strip()]
    shown = align(sent, back)
    seen, missing, at_gap = losses(shown, reader_sequences(work, f"r{r}_reader.err"))
    span = len(seen) + len(missing)
    in_order = all(b > a for a, b in zip(seen, seen[1:]))
    unmatched = sum(1 for j in shown if j is None)
    summary = [l.strip() for l in open(os.path.join(work, f"r{r}.err")) if "frames written" in l]
    figures.append(100 * len(seen) / span if span else 0)
    print(f"round {r} {fmt}: {len(seen)} of {span} output frames arrived ({figures[-1]:.1f} %), {len(missing)} "
          f"missing ({at_gap} at reader gaps), {'in order' if in_order else 'OUT OF ORDER'}, {unmatched} unmatched; "
          f"{summary[-1] if summary else 'no summary'}")
print(f"mean {sum(figures) / len(figures):.1f} %, worst {min(figures):.1f} %, rounds >= 95 %: "
      f"{sum(f >= 95 for f in figures)} of {len(figures)}")
PY
