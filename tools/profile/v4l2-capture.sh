#!/usr/bin/env bash
# CPU per captured frame, colorcam record vs v4l2-ctl --stream-mmap, 640x360 YUYV 30 fps from vivid, in ONE
# vivid-run VM boot. Both write their frames to the guest's RAM disk; each runs ROUNDS times, in turn, and a
# 1-frame run of each is subtracted (process start-up and setup are not per-frame costs).
#
#   tools/profile/v4l2-capture.sh [FRAMES=300] [ROUNDS=3]      (needs a release build: make release)
#   COLORCAM=PATH …        another colorcam binary than .build/release/colorcam
#   COLORCAM_VS=PATH …     also a second colorcam binary (e.g. a saved build from before a change), in turn with
#                          the others in the same VM, so both meet the same emulation and host load
# Prints user+sys ms per frame for each and the ratio to v4l2-ctl: the mean over the rounds, and the best (least
# disturbed) round, which is what Tests/vivid/check.py judges (there with 2 rounds).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FRAMES=${1:-300}
ROUNDS=${2:-3}
C=${COLORCAM:-$ROOT/.build/release/colorcam}
[ -x "$C" ] || { echo "build first: swift build -c release --product colorcam" >&2; exit 2; }
VS=${COLORCAM_VS:-}
[ -z "$VS" ] || [ -x "$VS" ] || { echo "COLORCAM_VS=$VS is not an executable" >&2; exit 2; }
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
R="--size 640x360 --fps 30 --format YUYV --quiet"
for n in 1 $(printf '%s ' $(yes "$FRAMES" | head -n "$ROUNDS")); do
    { time \$V --stream-count=\$n --stream-to=/tmp/p.raw >/dev/null 2>&1; } 2>> "$WORK/v4l2ctl_\$n"
    rm -f /tmp/p.raw
    { time "$C" record \$R --frames \$n /tmp/p.y4m >/dev/null 2>&1; } 2>> "$WORK/colorcam_\$n"
    rm -f /tmp/p.y4m
    if [ -n "$VS" ]; then
        { time "$VS" record \$R --frames \$n /tmp/p.y4m >/dev/null 2>&1; } 2>> "$WORK/colorcam-vs_\$n"
        rm -f /tmp/p.y4m
    fi
done
GUEST
bash "$VIVID_RUN" --workdir "$WORK" -- bash "$WORK/guest.sh"
python3 - "$WORK" "$FRAMES" "$C" "$VS" <<'PY'
import sys
work, frames, c, vs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def cpu(name, n):
    return [sum(map(float, l.split())) for l in open(f"{work}/{name}_{n}") if l.strip()]
res = {}
for name in ["v4l2ctl", "colorcam"] + (["colorcam-vs"] if vs else []):
    runs, one = cpu(name, frames), cpu(name, 1)[0]
    mean, best = sum(runs) / len(runs), min(runs)
    res[name] = ((mean - one) / (frames - 1) * 1000, (best - one) / (frames - 1) * 1000, mean / frames * 1000)
    print(f"{name:11s} {res[name][0]:6.2f} ms CPU/frame mean (minus 1-frame run), {res[name][1]:6.2f} best round, "
          f"{res[name][2]:6.2f} whole run; rounds: {' '.join(f'{r:.2f}' for r in runs)} s, 1-frame {one:.2f} s")
for name, path in [("colorcam", c)] + ([("colorcam-vs", vs)] if vs else []):
    print(f"ratio {name} ({path}) / v4l2-ctl: {res[name][0] / res['v4l2ctl'][0]:.2f} per frame (means), "
          f"{res[name][1] / res['v4l2ctl'][1]:.2f} best rounds, {res[name][2] / res['v4l2ctl'][2]:.2f} whole run")
PY
