#!/bin/sh
# Trains the detector's CNN variants and the colorizer side by side on one CUDA machine, in one command.
#
#   sh tools/gpu_train.sh prepare                 # on the development machine: builds .gpu/ (git-ignored, ~30 MB)
#   sh tools/gpu_train.sh run OUT MINUTES [cpu]   # on the CUDA machine, from the repository root, .gpu/ beside it
#
# prepare: .gpu/detect/photos (the detect generator's train-split photos, JPEG; tools/scenes/dr_photos.py) and
# .gpu/color (the colorizer's training photos and cut-outs; tools/train/colordata.py, from /work/data/color or
# COLOR_WORK). No held-out photo of either model goes in.
#
# run: the colorizer (tools/train/gpu_job.sh, 4 data workers) in the background, and the detector's
# stream_train.py in the foreground with the other cores rendering scenes; each trains for MINUTES after its
# start-up (the detector's buffer takes ~30 s to fill). If the detector's run fails, the colorizer's is stopped
# and the script exits 1 at once, so a broken run costs seconds, not the whole budget. Writes at most 8 files:
#   OUT/color-last.pt, OUT/color-log.txt, OUT/color-stats.json, OUT/color-stdout.txt,
#   OUT/detect/<variant>.pt (three variants), OUT/detect/stream_log.json.
# The colorizer's COLOR_* settings pass through to tools/train/gpu_job.sh (e.g. COLOR_INIT=Models/colorcam-default/model.onnx
# COLOR_LR=3e-4 resumes the shipped colorizer instead of training one afresh).
# DETECT_VARIANTS overrides the variants (space-separated --variant values); DETECT_EXTRA adds stream_train.py
# options (e.g. a smaller --min-scenes for a trial on a CPU).
set -eu
usage() {
    echo "usage: $0 prepare | run OUT MINUTES [cuda|cpu]" >&2
    exit 64
}
[ $# -ge 1 ] || usage
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
case $1 in
prepare)
    python3 tools/scenes/dr_photos.py .build/scenes-cache --jpeg-dir .gpu/detect/photos
    python3 tools/train/colordata.py --work "${COLOR_WORK:-/work/data/color}" --pack .gpu/color
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    du -sh .gpu
    ;;
run)
    [ $# -ge 3 ] || usage
    OUT=$2
    MINUTES=$3
    DEVICE=${4:-cuda}
    [ -d .gpu/detect/photos ] && [ -f .gpu/color/index.json ] || { echo "gpu_train: no .gpu/ (run: $0 prepare)" >&2; exit 66; }
    export PYTHONUNBUFFERED=1
    mkdir -p "$OUT/detect"
    CORES=$(nproc)
    WORKERS=$((CORES - 6))
    [ "$WORKERS" -ge 2 ] || WORKERS=2
    echo "gpu_train: $CORES cores, detector render workers $WORKERS, colorizer workers 4; $(python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())')"
    COLOR_WORKERS=4 sh tools/train/gpu_job.sh "$OUT" "$MINUTES" "$DEVICE" > "$OUT/color-stdout.txt" 2>&1 &
    COLOR=$!
    VARIANTS=${DETECT_VARIANTS:-"s10,width=1.0,lr=3e-3 ft4,width=1.0,lr=1e-3,init=Models/detect-default/model.onnx w15,width=1.5,lr=3e-3"}
    set --
    for v in $VARIANTS; do set -- "$@" --variant "$v"; done
    if ! python3 tools/detect_train/stream_train.py --out "$OUT/detect" --minutes "$MINUTES" --workers "$WORKERS" \
        --device "$DEVICE" --photo-cache '' --photos .gpu/detect/photos --photos .gpu/color/photos --batch 128 "$@" \
        ${DETECT_EXTRA:-}; then
        echo "gpu_train: the detector's run failed; stopping the colorizer's" >&2
        pkill -TERM -P "$COLOR" 2>/dev/null || true   # train.py (its data workers follow it)
        kill "$COLOR" 2>/dev/null || true
        exit 1
    fi
    status=0
    wait "$COLOR" || status=$?
    grep '\[color\]' "$OUT/color-stdout.txt" | tail -4
    echo "gpu_train: colorizer exit $status"
    ls -la "$OUT" "$OUT/detect"
    exit "$status"
    ;;
*)
    usage
    ;;
esac
