#!/usr/bin/env bash
# Runs INSIDE a vivid-run VM for tools/profile/v4l2out_arrival.sh: ROUNDS rounds of `colorcam live --v4l2-output`
# into vivid's looped output node, each read back for SECONDS by v4l2-ctl, alternating YUYV and YU12.
#   $1 work folder, $2 colorcam, $3 source clip, $4 rounds, $5 seconds per read
set -u
W=$1 C=$2 SRC=$3 ROUNDS=$4 SECS=$5
CAP=/dev/video0 OUT=/dev/video1
echo started > "$W/started"
# shellcheck source=Tests/vivid/loop_video.sh
source "$(dirname "$0")/../../Tests/vivid/loop_video.sh"
loop_video $CAP $OUT "$W/setup.txt"
frames=$(( SECS * 60 ))
for r in $(seq 1 "$ROUNDS"); do
    fmt=YUYV; [ $(( r % 2 )) = 0 ] && fmt=YU12
    v4l2-ctl -d $CAP --set-fmt-video width=640,height=480,pixelformat=$fmt >> "$W/setup.txt" 2>&1
    "$C" live --source "$SRC" --listen 127.0.0.1:$(( 18200 + r )) --simulate-inference-ms 20 --simulate-mode sleep \
        --v4l2-output $OUT --v4l2-output-format $fmt --output /tmp/sent.y4m --trace "$W/r$r.json" \
        > "$W/r$r.out" 2> "$W/r$r.err" &
    pid=$!
    sleep 3
    v4l2-ctl -d $CAP --verbose --stream-mmap=16 --stream-count=$frames --stream-to=/tmp/back.raw \
        > /dev/null 2> "$W/r${r}_reader.err"
    kill -TERM $pid
    wait $pid
    echo "$fmt" > "$W/r$r.fmt"
    python3 "$(dirname "$0")/../../Tests/vivid/frame_hashes.py" y4m /tmp/sent.y4m > "$W/r${r}_sent.txt"
    python3 "$(dirname "$0")/../../Tests/vivid/frame_hashes.py" $fmt /tmp/back.raw > "$W/r${r}_back.txt"
    rm -f /tmp/sent.y4m /tmp/back.raw
done
echo finished > "$W/finished"
