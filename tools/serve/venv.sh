#!/usr/bin/env bash
# The remote-inference server's venv (.build/serve-venv: kserve + onnxruntime from tools/serve/requirements.txt, kept
# out of the system python so kserve's numpy/protobuf pins never reach its onnx). Idempotent: installs only when the
# imports fail or requirements.txt differs from the copy saved at the last successful install.
#   tools/serve/venv.sh             make sure it is there, now (waits for an install already running in the background)
#   tools/serve/venv.sh --background   start the install in the background and return at once (nothing to do: nothing
#                                      started); its output goes to .build/serve-venv.log
# `make test` starts it in the background before the Swift builds (the install is downloads and unpacking, ~80 s on a
# fresh machine, which would otherwise wait for the compiler or the other way round); `make integration` waits for it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VENV="$ROOT/.build/serve-venv"
REQS="$ROOT/tools/serve/requirements.txt"
PIDFILE="$ROOT/.build/serve-venv.pid"
LOG="$ROOT/.build/serve-venv.log"
PY=${PYTHON:-python3}

ready() {
  cmp -s "$REQS" "$VENV/requirements.installed" && "$VENV/bin/python" -c "import kserve, onnxruntime" 2>/dev/null
}

install() {
  echo "serve venv: installing tools/serve/requirements.txt (kserve, onnxruntime) into .build/serve-venv" >&2
  rm -f "$VENV/requirements.installed"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQS"
  cp "$REQS" "$VENV/requirements.installed"
}

# A background install still running (its pid file names a live process).
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

mkdir -p "$ROOT/.build"
if [ "${1:-}" = "--background" ]; then
  if running || ready; then exit 0; fi
  (
    trap 'rm -f "$PIDFILE"' EXIT
    install
  ) </dev/null >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  echo "serve venv: installing in the background (log: .build/serve-venv.log)" >&2
  exit 0
elif [ $# -gt 0 ]; then
  echo "usage: tools/serve/venv.sh [--background]" >&2
  exit 64
fi

waited=0
if running; then
  echo "serve venv: waiting for the background install (.build/serve-venv.log)" >&2
  while running; do sleep 1; done
  waited=1
fi
if ! ready; then
  # Only the log of the install just waited for: an older one may be from an install that succeeded.
  if ((waited)) && [ -s "$LOG" ]; then
    echo "serve venv: the background install did not finish; its log (.build/serve-venv.log) ends:" >&2
    tail -n 5 "$LOG" >&2
  fi
  install
fi
