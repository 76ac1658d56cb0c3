#!/bin/sh
# The colorizer's GPU training job: one command, from the repository root layout (data in .gpu/color, a pack made
# by tools/train/colordata.py: training photos only).
#
#     sh tools/train/gpu_job.sh OUT_DIR MINUTES [cuda|cpu]
#
# Writes OUT_DIR/color-last.pt (model-only checkpoint, rewritten atomically every 2 minutes and at the end),
# OUT_DIR/color-log.txt (train.py's log) and OUT_DIR/color-stats.json (the training set's mean ab, for eval.py).
# MINUTES is the training budget (the cosine schedule anneals within it); start-up adds well under a minute.
# Progress lines ("[color] step ...") go to stdout every 30 s. Env overrides: COLOR_DEVICE (cuda), COLOR_WORKERS
# (4), COLOR_WIDTH (1.5), COLOR_BATCH (32), COLOR_CROP (256), COLOR_REUSE (2), COLOR_LR (2e-3), COLOR_SEED (1),
# COLOR_RUN (scratch folder for the full checkpoint with the optimiser; default a fresh folder under /tmp),
# COLOR_INIT (an exported model.onnx to resume from instead of starting afresh, e.g. Models/colorcam-default/model.onnx:
# train.py --init-onnx, its width and head come back with it and its folded BatchNorms stay frozen; a lower
# COLOR_LR such as 3e-4 suits a resumed run).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 OUT_DIR MINUTES [cuda|cpu]" >&2
    exit 2
fi
OUT_DIR=$1
MINUTES=$2
DEVICE=${3:-${COLOR_DEVICE:-cuda}}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
[ -f .gpu/color/index.json ] || { echo "[color] no data pack at $ROOT/.gpu/color" >&2; exit 3; }
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
RUN=${COLOR_RUN:-$(mktemp -d /tmp/color-run.XXXXXX)}
echo "[color] $(date -u +%H:%M:%S) python3 $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())')"
if [ -n "${COLOR_INIT:-}" ]; then
    [ -f "$COLOR_INIT" ] || { echo "[color] COLOR_INIT: no such file: $COLOR_INIT" >&2; exit 3; }
    set -- --init-onnx "$COLOR_INIT"
    [ -z "${COLOR_WIDTH:-}" ] || set -- "$@" --width "$COLOR_WIDTH"
else
    set -- --width "${COLOR_WIDTH:-1.5}"
fi
python3 tools/train/train.py --pack .gpu/color --out "$RUN" --log "$OUT_DIR/color-log.txt" \
    --light-ckpt "$OUT_DIR/color-last.pt" --device "$DEVICE" --workers "${COLOR_WORKERS:-4}" \
    --minutes "$MINUTES" --checkpoint-minutes 2 --print-sim "$@" \
    --crop "${COLOR_CROP:-256}" --batch "${COLOR_BATCH:-32}" --reuse "${COLOR_REUSE:-2}" \
    --lr "${COLOR_LR:-2e-3}" --lr-min 5e-5 --seed "${COLOR_SEED:-1}"
cp "$RUN/stats.json" "$OUT_DIR/color-stats.json"
size=$(wc -c < "$OUT_DIR/color-last.pt")
echo "[color] $(date -u +%H:%M:%S) done: $OUT_DIR/color-last.pt $size bytes"
[ "$size" -le 16777216 ] || { echo "[color] color-last.pt is over 16 MiB" >&2; exit 4; }
