#!/usr/bin/env bash
# CPU per captured frame, colorcam record vs v4l2-ctl --stream-mmap, 640x360 YUYV 30 fps from vivid, in ONE
# vivid-run VM boot. Both write their frames to the guest's RAM disk; each runs ROUNDS times, alternating, and a
# 1-frame run of each is subtracted (process start-up and setup are not per-frame costs).
#
#   tools/profile/v4l2-capture.sh [FRAMES=300] [ROUNDS=3]      (needs a release build: make release)
# Prints user+sys ms per frame for both and the ratio colorcam / v4l2-ctl.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FRAMES=${1:-300}
ROUNDS=${2:-3}
C=$ROOT/.build/release/colorcam
[ -x "$C" ] || { echo "build first: swift build -c release --product colorcam" >&2; exit 2; }
VIVID_RUN=""
for candidate in "$ROOT/../shared/vivid/vivid-run" /work/shared/vivid/vivid-run; do
    [ -f "$candidate" ] && { VIVID_RUN=$candidate; break; }
done
[ -n "$VIVID_RUN" ] || { echo "vivid-run not found" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/guest.sh" <<GUEST
TIMEFORMAT='%U %S'
V="v4l2-ctl -d /dev/video0 --set-fmt-video=width=640,height=360,pixelformat=YUYV --set-parm=30 --stream-mmap=3"
R="$C record --size 640x360 --fps 30 --format YUYV --quiet"
for n in 1 $(printf '%s ' $(yes "$FRAMES" | head -n "$ROUNDS")); do
    { time \$V --stream-count=\$n --stream-to=/tmp/p.raw >/dev/null 2>&1; } 2>> "$WORK/v4l2ctl_\$n"
    rm -f /tmp/p.raw
    { time \$R --frames \$n /tmp/p.y4m >/dev/null 2>&1; } 2>> "$WORK/colorcam_\$n"
    rm -f /tmp/p.y4m
done
GUEST
bash "$VIVID_RUN" --workdir "$WORK" -- bash "$WORK/guest.sh"
python3 - "$WORK" "$FRAMES" <<'PY'
import sys
work, frames = sys.argv[1], int(sys.argv[2])
def cpu(name, n):
    runs = [sum(map(float, l.split())) for l in open(f"{work}/{name}_{n}") if l.strip()]
    return sum(runs) / len(runs), len(runs)
res = {}
for name in ("v4l2ctl", "colorcam"):
    (whole, rounds), (one, _) = cpu(name, frames), cpu(name, 1)
    res[name] = ((whole - one) / (frames - 1) * 1000, whole / frames * 1000)
    print(f"{name:9s} {res[name][0]:7.2f} ms CPU/frame (minus 1-frame run), {res[name][1]:7.2f} whole run, {rounds} rounds")
print(f"ratio colorcam / v4l2-ctl: {res['colorcam'][0] / res['v4l2ctl'][0]:.2f} per frame, "
      f"{res['colorcam'][1] / res['v4l2ctl'][1]:.2f} whole run")
PY
