#!/usr/bin/env bash
# Installs what colorcam needs to build, test and run its demo — idempotent: it installs only what is missing.
#   tools/deps.sh            Debian packages + Python test oracles
# (The remote-inference server's venv is tools/serve/venv.sh's: `make deps` runs both.)
# Debian packages: the C libraries colorcam links (libpng, OpenBLAS, libv4l2, libturbojpeg) and the tools its tests
# use as oracles (ffmpeg/ffprobe, v4l2-ctl, chromium, systemd-analyze for the units in contrib/). Python: pytest for
# the integration suite, onnx/onnxruntime/numpy for the inference conformance suite, OpenCV/scikit-image/
# scikit-learn/matplotlib for the detect scene renderer and its OpenCV baseline.
set -euo pipefail
APT_PACKAGES=(pkg-config ffmpeg libpng-dev libopenblas-dev libv4l-dev libturbojpeg0-dev v4l-utils chromium systemd)
# "module:pip-package" — the import name, then what pip installs it from.
PIP_MODULES=(pytest:pytest numpy:numpy onnx:onnx onnxruntime:onnxruntime cv2:opencv-python-headless
             skimage:scikit-image sklearn:scikit-learn matplotlib:matplotlib PIL:pillow)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "deps: installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The detect scene renderer fetches opencv-doc's sample photos with `apt-get download`: it needs package lists (kept
# compressed on some systems, *_Packages.lz4: without the trailing * every call ran apt-get update).
if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
fi

PY=${PYTHON:-python3}
# One interpreter looks every module up without importing it (an import per module took ~9 s of every make): it prints
# the pip packages of those it cannot find.
read -r -a pip_missing <<< "$("$PY" - "${PIP_MODULES[@]}" <<'PYEOF'
import importlib.util, sys
print(" ".join(e.split(":")[1] for e in sys.argv[1:] if importlib.util.find_spec(e.split(":")[0]) is None))
PYEOF
)"
if ((${#pip_missing[@]})); then
  echo "deps: installing Python packages: ${pip_missing[*]}" >&2
  "$PY" -m pip install --quiet "${pip_missing[@]}"
fi

