#!/usr/bin/env bash
# The detect acceptance figures: accuracy on 500 held-out scenes vs the OpenCV baseline, speed vs the baseline,
# tracking on three 10-s sequences. Needs a release build (make release) and the renderer's Python packages
# (numpy, opencv-python-headless, scikit-image, scikit-learn, matplotlib) plus opencv-doc's photos (apt-get download).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
echo "== accuracy: 500 scenes, benchmark photos (held out from tuning), seed 1"
$PY tools/profile/detect_accuracy.py --set benchmark --count 500 --seed 1
echo "== speed: detect + track per 640x480 frame vs OpenCV squares"
$PY tools/profile/detect_speed.py --set benchmark --seed 1
echo "== tracking: three 10-s sequences with camera motion and a sliding print"
$PY tools/profile/detect_tracking.py --set benchmark --seeds 1,2,3
