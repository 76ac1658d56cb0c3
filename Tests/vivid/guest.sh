#!/usr/bin/env bash
# Runs INSIDE the vivid-run VM (one boot): exercises colorcam's V4L2 capture against the kernel's vivid driver and
# writes every output, exit code and stderr into the work folder $1. It judges nothing: Tests/vivid/check.py
# compares the results on the host afterwards (process start and Python are slow in the emulated guest).
#
# usage (from Tests/vivid/run.sh): vivid-run --workdir W -- bash Tests/vivid/guest.sh W COLORCAM
set -u
W=$1
C=$2
D=/dev/video0
cd "$W"
echo started > "$W/started"
exec 2> "$W/guest.stderr"

# run NAME CMD...: runs CMD with stdout/stderr to NAME.out/NAME.err, exit code to NAME.rc.
run() {
    local name=$1; shift
    "$@" > "$W/$name.out" 2> "$W/$name.err"
    echo $? > "$W/$name.rc"
}
ctl() { v4l2-ctl -d $D "$@" > /dev/null; }

# Stable pictures for the pixel comparisons: no text overlay, fixed 75 % colour bars, no movement.
ctl -c osd_text_mode=2 -c test_pattern=0 -c horizontal_movement=3 -c vertical_movement=3 || echo "ctl failed" >&2
v4l2-ctl -d $D --list-ctrls > "$W/controls.txt"

# 1. devices
run devices "$C" devices

# 2. 300 frames at 640x360, 30 fps, with the same 300 frames read by v4l2-ctl before and after: the driver's own
# sequence numbers under the VM's load around the run (vivid skips numbers when the emulated guest falls behind).
# A second colorcam recording (cap300b) is a second attempt for the driver-gap comparison only.
ref300() {
    run "$1" v4l2-ctl -d $D --set-fmt-video=width=640,height=360,pixelformat=YUYV --set-parm=30 \
        --stream-mmap=3 --stream-count=300 --verbose --stream-to=/dev/null
}
ref300 seq_v4l2ctl_before
run cap300 "$C" record --device $D --size 640x360 --fps 30 --frames 300 --trace "$W/cap300.json" "$W/cap300.y4m"
run cap300b "$C" record --device $D --size 640x360 --fps 30 --frames 300 --trace "$W/cap300b.json" "$W/cap300b.y4m"
ref300 seq_v4l2ctl

# 3. Pixel equality with v4l2-ctl, same configuration, for several formats (640x480, 25 fps).
for f in YUYV UYVY NV12 YU12 GREY RGB3 XR24; do
    run "ref_$f" v4l2-ctl -d $D --set-fmt-video=width=640,height=480,pixelformat=$f --set-parm=25 \
        --stream-mmap=3 --stream-count=3 --stream-to="$W/ref_$f.raw"
    run "eq_$f" "$C" record --device $D --size 640x480 --fps 25 --format $f --frames 3 "$W/eq_$f.y4m"
done

# 4. Format sweep at 640x480: every format vivid offers (as `v4l2-ctl --list-formats` names them).
v4l2-ctl -d $D --list-formats | sed -n "s/.*\[[0-9]*\]: '\(....\)'.*/\1/p" > "$W/sweep_formats.txt"
while IFS= read -r f; do
    tag=$(printf '%s' "$f" | tr ' ' '_')
    run "sweep_$tag" "$C" record --device $D --size 640x480 --fps 25 --format "$f" --frames 2 "$W/sweep_$tag.y4m"
done < "$W/sweep_formats.txt"

# 5. Decimation: device held at 60 fps at 320x180, 30 asked.
run decim "$C" record --device $D --size 320x180 --fps 30 --device-fps 60 --frames 90 --trace "$W/decim.json" \
    "$W/decim.y4m"

# 6. Driver gaps: vivid drops 20 % of the buffers.
ctl -c percentage_of_dropped_buffers=20
run gaps "$C" record --device $D --size 640x360 --fps 30 --frames 120 --trace "$W/gaps.json" "$W/gaps.y4m"
ctl -c percentage_of_dropped_buffers=0

# 6b. Crash safety: SIGKILL mid-recording after 1, 2 and 3 s; check.py checks what each kill left in killN/.
for t in 1 2 3; do
    mkdir -p "$W/kill$t"
    "$C" record --device $D --size 640x360 --fps 30 --seconds 30 --trace "$W/kill$t/t.json" "$W/kill$t/out.y4m" \
        > /dev/null 2> "$W/kill$t.err" &
    pid=$!
    sleep $t
    kill -9 $pid
    wait $pid 2> /dev/null
done

# 7. CPU per captured frame, 640x360 YUYV 30 fps, 300 frames each, both writing to the guest's RAM disk;
#    in turn three times so drifting host load hits both alike (check.py judges each by its median round).
#    The 1-frame runs measure process start-up and setup, subtracted to get the cost per frame.
TIMEFORMAT='%U %S %R'
{ time v4l2-ctl -d $D --set-fmt-video=width=640,height=360,pixelformat=YUYV --set-parm=30 \
    --stream-mmap=3 --stream-count=1 --stream-to=/tmp/cpu.raw > /dev/null 2>&1 ; } 2> "$W/cpu1_v4l2ctl.time"
{ time "$C" record --device $D --size 640x360 --fps 30 --format YUYV --frames 1 --quiet /tmp/cpu.y4m \
    > /dev/null 2>&1 ; } 2> "$W/cpu1_colorcam.time"
for i in 1 2 3; do
    { time v4l2-ctl -d $D --set-fmt-video=width=640,height=360,pixelformat=YUYV --set-parm=30 \
        --stream-mmap=3 --stream-count=300 --stream-to=/tmp/cpu.raw > /dev/null 2>&1 ; } 2> "$W/cpu_v4l2ctl_$i.time"
    rm -f /tmp/cpu.raw
    { time "$C" record --device $D --size 640x360 --fps 30 --format YUYV --frames 300 --quiet /tmp/cpu.y4m \
        > /dev/null 2>&1 ; } 2> "$W/cpu_colorcam_$i.time"
    rm -f /tmp/cpu.y4m
done

# 8. Disconnect mid-stream (last: vivid only reconnects once every handle is closed).
"$C" record --device $D --size 640x360 --fps 30 --seconds 60 --trace "$W/disc.json" "$W/disc.y4m" \
    > "$W/disc.out" 2> "$W/disc.err" &
pid=$!
sleep 4
ctl -c disconnect=1
wait $pid
echo $? > "$W/disc.rc"

# 9. colorcam live --device: preview endpoints, device loss and recovery, SIGTERM (Tests/vivid/guest_live.sh).
bash "$(dirname "$0")/guest_live.sh" "$W" "$C"

# 10. colorcam live --v4l2-output into vivid's output node, looped back to its capture node (guest_v4l2out.sh).
bash "$(dirname "$0")/guest_v4l2out.sh" "$W" "$C" "$W/v4l2out_src.y4m"
ls -a "$W" > "$W/listing.txt"
echo done > "$W/finished"
