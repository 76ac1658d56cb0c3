# Sourced inside the vivid-run VM by Tests/vivid/guest_v4l2out.sh and tools/profile/v4l2out_arrival_guest.sh.
# loop_video CAP OUT LOG: joins vivid's output node OUT to its capture node CAP with Loop Video. Loop Video only joins
# matching connectors with the same timings and format: HDMI in 3 <- HDMI out 1, 640x480p59.94 (DV timings index 0);
# no text overlay on the captured frames. v4l2-ctl's output goes to LOG.
loop_video() {
    v4l2-ctl -d "$1" -i 3 > "$3" 2>&1
    v4l2-ctl -d "$2" -o 1 >> "$3" 2>&1
    v4l2-ctl -d "$2" --set-dv-bt-timings index=0 >> "$3" 2>&1
    v4l2-ctl -d "$1" --set-dv-bt-timings index=0 >> "$3" 2>&1
    v4l2-ctl -d "$1" --set-ctrl loop_video=1,osd_text_mode=2 >> "$3" 2>&1
}
