#!/usr/bin/env bash
# Runs INSIDE the vivid-run VM, after guest.sh's capture checks: `colorcam live --device` against vivid —
# the preview endpoints fetched with curl, then a vivid disconnect and the daemon's recovery, then SIGTERM.
# Judges nothing: Tests/vivid/check.py reads the files it leaves in $1.
set -u
W=$1
C=$2
D=/dev/video0
PORT=18090
now_us() { echo $(( $(date +%s%N) / 1000 )); }

"$C" live --device $D --size 640x360 --fps 30 --listen 127.0.0.1:$PORT --simulate-inference-ms 40 \
    --simulate-mode sleep --trace "$W/live.json" --output "$W/live.y4m" > "$W/live.out" 2> "$W/live.err" &
pid=$!
for _ in $(seq 60); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done
sleep 3
curl -s -o "$W/live_healthz.txt" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz" > "$W/live_healthz.code"
curl -s -o "$W/live_metrics.txt" -w '%{http_code}' "http://127.0.0.1:$PORT/metrics" > "$W/live_metrics.code"
curl -s -o "$W/live_snapshot.jpg" -w '%{http_code}' "http://127.0.0.1:$PORT/snapshot.jpg" > "$W/live_snapshot.code"

# Device loss: vivid's disconnect control kills the open handles; vivid reconnects once every handle is closed,
# so the device "returns" as soon as the daemon lets go of it. The daemon must resume on its own.
now_us > "$W/live_disconnect_us.txt"
v4l2-ctl -d $D -c disconnect=1 > /dev/null 2>&1
sleep 1
curl -s -o "$W/live_healthz_lost.txt" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz" > "$W/live_healthz_lost.code"
sleep 5
curl -s -o "$W/live_healthz_back.txt" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz" > "$W/live_healthz_back.code"

start=$(now_us)
kill -TERM $pid
wait $pid
echo $? > "$W/live.rc"
echo $(( $(now_us) - start )) > "$W/live_stop_us.txt"
