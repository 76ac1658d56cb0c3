#!/usr/bin/env bash
# Runs INSIDE the vivid-run VM, after guest_live.sh: `colorcam live --v4l2-output` writing to vivid's video output
# node, looped back (vivid's Loop Video) into its capture node, which v4l2-ctl reads as another application would
# read a v4l2loopback virtual camera. Judges nothing: Tests/vivid/check_v4l2out.py reads what it leaves in $1.
#   $1 work folder, $2 colorcam, $3 source clip (640x480 .y4m with distinct frames, made by run.sh)
set -u
W=$1
C=$2
SRC=$3
CAP=/dev/video0
OUT=/dev/video1
now_us() { echo $(( $(date +%s%N) / 1000 )); }
hash_frames() { python3 "$(dirname "$0")/frame_hashes.py" "$@"; }

# shellcheck source=Tests/vivid/loop_video.sh
source "$(dirname "$0")/loop_video.sh"
loop_video $CAP $OUT "$W/v4l2out_setup.txt"

# A: YUYV forced (what most consumers read). A reader takes 4 s of frames; then a second reader is stopped
# (SIGSTOP) for 5 s mid-stream and let go again. No --output here (the guest is emulated: every copy costs), so
# check_v4l2out.py takes the frames sent from the trace's output events and the source clip.
v4l2-ctl -d $CAP --set-fmt-video width=640,height=480,pixelformat=YUYV >> "$W/v4l2out_setup.txt" 2>&1
"$C" live --source "$SRC" --listen 127.0.0.1:18093 --simulate-inference-ms 20 --simulate-mode sleep \
    --v4l2-output $OUT --v4l2-output-format YUYV --trace "$W/v4l2out_a.json" \
    > "$W/v4l2out_a.out" 2> "$W/v4l2out_a.err" &
pid=$!
sleep 3
v4l2-ctl -d $CAP --verbose --stream-mmap=16 --stream-count=240 --stream-to=/tmp/back_a.raw \
    > /dev/null 2> "$W/v4l2out_reader_a.err"
echo $? > "$W/v4l2out_reader_a.rc"
curl -s "http://127.0.0.1:18093/metrics" > "$W/v4l2out_metrics_before.txt"
v4l2-ctl -d $CAP --stream-mmap=4 --stream-count=100000 --stream-to=/dev/null > /dev/null 2>&1 &
reader=$!
sleep 1
now_us > "$W/v4l2out_pause_start_us.txt"
kill -STOP $reader
sleep 5
kill -CONT $reader
now_us > "$W/v4l2out_pause_end_us.txt"
sleep 1
kill -TERM $reader; wait $reader 2> /dev/null
curl -s "http://127.0.0.1:18093/metrics" > "$W/v4l2out_metrics.txt"
kill -TERM $pid
wait $pid
echo $? > "$W/v4l2out_a.rc"
hash_frames YUYV /tmp/back_a.raw > "$W/v4l2out_a_back.txt"
rm -f /tmp/back_a.raw

# B: the format colorcam picks by itself (YU12 on vivid), read back as YU12, 2 s, beside the preview and --output
# (the frames sent are the .y4m's).
v4l2-ctl -d $CAP --set-fmt-video width=640,height=480,pixelformat=YU12 >> "$W/v4l2out_setup.txt" 2>&1
"$C" live --source "$SRC" --listen 127.0.0.1:18094 --simulate-inference-ms 20 --simulate-mode sleep \
    --v4l2-output $OUT --output /tmp/v4l2out_b.y4m --trace "$W/v4l2out_b.json" \
    > "$W/v4l2out_b.out" 2> "$W/v4l2out_b.err" &
pid=$!
sleep 3
v4l2-ctl -d $CAP --verbose --stream-mmap=16 --stream-count=120 --stream-to=/tmp/back_b.raw \
    > /dev/null 2> "$W/v4l2out_reader_b.err"
kill -TERM $pid
wait $pid
echo $? > "$W/v4l2out_b.rc"
hash_frames y4m /tmp/v4l2out_b.y4m > "$W/v4l2out_b_sent.txt"
hash_frames YU12 /tmp/back_b.raw > "$W/v4l2out_b_back.txt"
rm -f /tmp/v4l2out_b.y4m /tmp/back_b.raw

# D: the output device is lost (vivid's disconnect control: open handles fail; vivid comes back once every handle
# is closed) while the daemon writes to it: the sink closes it, frames meanwhile are sink_error, and it reopens.
"$C" live --source "$SRC" --listen 127.0.0.1:18096 --simulate-inference-ms 20 --simulate-mode sleep \
    --v4l2-output $OUT --trace "$W/v4l2out_d.json" > "$W/v4l2out_d.out" 2> "$W/v4l2out_d.err" &
pid=$!
sleep 3
v4l2-ctl -d $OUT -c disconnect=1 > "$W/v4l2out_disconnect.txt" 2>&1
sleep 6
curl -s "http://127.0.0.1:18096/metrics" > "$W/v4l2out_d_metrics.txt"
kill -TERM $pid
wait $pid
echo $? > "$W/v4l2out_d.rc"

# C: a node that is not an output device, and one that does not exist: exit 69 with the path, before any frame.
"$C" live --source "$SRC" --listen 127.0.0.1:18095 --v4l2-output $CAP > /dev/null 2> "$W/v4l2out_capnode.err"
echo $? > "$W/v4l2out_capnode.rc"
"$C" live --source "$SRC" --listen 127.0.0.1:18095 --v4l2-output /dev/video99 > /dev/null 2> "$W/v4l2out_missing.err"
echo $? > "$W/v4l2out_missing.rc"
