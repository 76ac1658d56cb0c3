#!/usr/bin/env bash
# Runs INSIDE the no-AVX VM (Tests/vivid/isa.sh): writes outputs, exit codes and stderr into $1; judges nothing.
set -u
W=$1
C=$2
cd "$3"
echo started > "$W/started"
exec 2> "$W/guest.stderr"
# The machine's own choices: no OpenBLAS core or kernel set forced from outside.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE COLORCAM_ISA
run() {
    local name=$1; shift
    "$@" > "$W/$name.out" 2> "$W/$name.err"
    echo $? > "$W/$name.rc"
}
grep -m1 '^flags' /proc/cpuinfo > "$W/cpuinfo_flags.txt"
run doctor "$C" doctor
run detect "$C" bench infer Models/detect-default/model.onnx --shape 1x3x120x160 --input "$W/detect.in.f32" \
    --output "$W/detect.guest.f32"
run colorize "$C" bench infer Models/colorcam-default/model.onnx --shape 1x1x256x256 \
    --input "$W/colorize.in.f32" --output "$W/colorize.guest.f32"
COLORCAM_ISA=avx2 run forced_avx2 "$C" doctor
echo finished > "$W/finished"
