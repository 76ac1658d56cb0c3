#!/usr/bin/env bash
# Builds the libFuzzer targets in tools/fuzz/targets/ with `swiftc -sanitize=fuzzer,address`.
#
# Not a SwiftPM product on purpose: `swift build` must not change. The library modules a target needs
# (ColorcamCore, Stream, TraceAnalysis, Infer and its kernel sets, Preview) are compiled straight from Sources/ by swiftc,
# one whole-module object each, with coverage instrumentation, AddressSanitizer, `-O` (overflow and bounds checks ON, unlike the
# `-Ounchecked` the package uses for Infer: a trap is exactly what a fuzzer should see) and `-enable-testing`, so a
# target can `@testable import` internal parsers. Outputs go to $FUZZ_BUILD (default .build/fuzz):
# fuzz-y4m, fuzz-onnx, fuzz-onnx-graph, fuzz-trace, fuzz-http, fuzz-infer-response.
#
# Usage: tools/fuzz/build.sh [TARGET ...]     (default: all six)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH
OUT=${FUZZ_BUILD:-.build/fuzz}
mkdir -p "$OUT"
# FUZZ_OPT=-Onone compiles several times faster (handy for a quick look); the default -O fuzzes several times faster.
FLAGS=("${FUZZ_OPT:--O}" -gline-tables-only -sanitize=fuzzer,address -enable-testing -parse-as-library -I "$OUT"
       -I Sources/CPNG -I Sources/CV4L2 -I Sources/CTurboJPEG -I Sources/CSched -I Sources/CSanitizer -Xcc -I/usr/include/libpng16)

# Compiles module $1 from Sources/$1 (and Sources/$1/Ops if present) unless its object is newer than every source,
# this script and (for the others) ColorcamCore.
module() {
    local name=$1
    local sources=(Sources/"$name"/*.swift)
    [[ -d Sources/$name/Ops ]] && sources+=(Sources/"$name"/Ops/*.swift)
    local object=$OUT/$name.o
    local inputs=("${sources[@]}" "$0")
    [[ $name != ColorcamCore ]] && inputs+=("$OUT/ColorcamCore.o")
    [[ $name == TraceAnalysis ]] && inputs+=("$OUT/Stream.o")
    local extra=()
    if [[ $name == Infer ]]; then kernels; inputs+=($(kernel_objects)); extra=(-I "$OUT/kernels"); fi
    if [[ -f $object ]] && [[ -z $(find "${inputs[@]}" -newer "$object" -print -quit) ]]; then return; fi
    echo "== fuzz build: module $name (${#sources[@]} files)"
    swiftc "${FLAGS[@]}" "${extra[@]}" -module-name "$name" -wmo -emit-module -emit-module-path "$OUT/$name.swiftmodule" \
        -c "${sources[@]}" -o "$object"
    touch "$object"  # swiftc leaves an unchanged object's mtime alone, which would make it look stale forever
}

# Part of a module, compiled under the module's name into $OUT/DIR (so a target imports it as usual) when only that
# part is fuzzed: partial DIR MODULE WHAT FILE... (rebuilt when a file, this script or ColorcamCore is newer).
partial() {
    local dir=$1 module=$2 what=$3; shift 3
    local object=$OUT/$dir/$module.o
    mkdir -p "$OUT/$dir"
    if [[ -f $object ]] && [[ -z $(find "$@" "$0" "$OUT/ColorcamCore.o" -newer "$object" -print -quit) ]]; then return; fi
    echo "== fuzz build: $what ($# files of $module)"
    swiftc "${FLAGS[@]}" -module-name "$module" -wmo -emit-module -emit-module-path "$OUT/$dir/$module.swiftmodule" \
        -c "$@" -o "$object"
    touch "$object"
}

# The engine's kernel sets (Sources/InferKernels; Package.swift's kernelTarget), which the whole Infer module imports:
# the protocol module, then the shared sources once per instruction set with its condition and code-generation flags.
KERNEL_SETS=("Baseline:COLORCAM_ISA_BASELINE:" "AVX2:COLORCAM_ISA_AVX2:-mavx2 -mfma"
             "AVX512:COLORCAM_ISA_AVX512:-mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512dq")
kernel_objects() {
    echo "$OUT/kernels/InferKernelSet.o"
    for set in "${KERNEL_SETS[@]}"; do echo "$OUT/kernels/InferKernels${set%%:*}.o"; done
}
kernels() {
    partial kernels InferKernelSet "the kernel protocol" Sources/InferKernels/Interface/*.swift
    local set kname define flags  # local: module() calls this and has its own $name
    for set in "${KERNEL_SETS[@]}"; do
        IFS=: read -r kname define flags <<< "$set"
        local object=$OUT/kernels/InferKernels$kname.o
        local sources=(Sources/InferKernels/Shared/*.swift)
        if [[ -f $object ]] && [[ -z $(find "${sources[@]}" "$0" "$OUT/kernels/InferKernelSet.o" -newer "$object" -print -quit) ]]; then
            continue
        fi
        echo "== fuzz build: kernels $kname"
        local xcc=()
        for f in $flags; do xcc+=(-Xcc "$f"); done
        swiftc "${FLAGS[@]}" -I "$OUT/kernels" -D "$define" "${xcc[@]}" -module-name "InferKernels$kname" -wmo \
            -emit-module -emit-module-path "$OUT/kernels/InferKernels$kname.swiftmodule" -c "${sources[@]}" -o "$object"
        touch "$object"
    done
}

# The ONNX decoder alone (module Infer, in $OUT/decoder): all the `onnx` target calls, in a fraction of the time the
# whole Infer module takes (its operators and kernels are what make that slow).
decoder() {
    partial decoder Infer "the ONNX decoder" Sources/Infer/InferError.swift Sources/Infer/Protobuf+Reader.swift \
        Sources/Infer/ONNX+Model.swift Sources/Infer/ONNX+Decode.swift
}

# The remote inference client's parsers alone (module Remote, in $OUT/remote-codec): HTTP response reader, v2 codec,
# JSON number lists, URL; the connection and RemoteModel need Infer, which the target does not.
remote_codec() {
    partial remote-codec Remote "the remote inference parsers" Sources/Remote/HTTPResponseReader.swift \
        Sources/Remote/V2Codec.swift Sources/Remote/JSONNumberLists.swift Sources/Remote/RemoteError.swift \
        Sources/Remote/InferenceURL.swift
}

# Links target $1 (tools/fuzz/targets/$1.swift) against the listed modules (`decoder`: the ONNX decoder alone).
target() {
    local name=$1; shift
    local modules=("$@")
    local objects=("$OUT/ColorcamCore.o")
    local search=()
    for m in "${modules[@]}"; do
        if [[ $m == decoder ]]; then objects+=("$OUT/decoder/Infer.o"); search=(-I "$OUT/decoder")
        elif [[ $m == remote-codec ]]; then objects+=("$OUT/remote-codec/Remote.o"); search=(-I "$OUT/remote-codec")
        elif [[ $m == Infer ]]; then objects+=("$OUT/Infer.o" $(kernel_objects)); search=(-I "$OUT/kernels")
        else objects+=("$OUT/$m.o"); fi
    done
    local binary=$OUT/fuzz-$name
    local harness=(tools/fuzz/targets/"$name".swift)
    # The two ONNX targets share their decoding step.
    [[ $name == onnx || $name == onnx-graph ]] && harness+=(tools/fuzz/targets/shared/onnx-decode.swift)
    if [[ -f $binary ]] && [[ -z $(find "${harness[@]}" "${objects[@]}" -newer "$binary" -print -quit) ]]; then return; fi
    echo "== fuzz build: fuzz-$name"
    swiftc "${search[@]}" "${FLAGS[@]}" -module-name "Fuzz_${name//-/_}" "${harness[@]}" "${objects[@]}" \
        -use-ld=lld -lpng16 -lv4l2 -lturbojpeg -o "$binary"
}

# The library module each target links (besides ColorcamCore).
library() {
    case $1 in
        y4m) echo Stream ;;
        trace) echo Stream TraceAnalysis ;;
        onnx) echo decoder ;;
        onnx-graph) echo Infer ;;
        http) echo Preview ;;
        infer-response) echo remote-codec ;;
        *) echo "build.sh: unknown target '$1' (y4m, onnx, onnx-graph, trace, http, infer-response)" >&2; return 64 ;;
    esac
}

targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(y4m onnx onnx-graph trace http infer-response)
libraries=()
for t in "${targets[@]}"; do libraries+=("$(library "$t")"); done
# ColorcamCore first; the others do not depend on each other, so they compile side by side, except TraceAnalysis,
# which imports Stream and comes after.
module ColorcamCore
pids=()
for m in $(printf '%s\n' ${libraries[@]} | sort -u); do
    if [[ $m == TraceAnalysis ]]; then continue
    elif [[ $m == decoder ]]; then decoder &
    elif [[ $m == remote-codec ]]; then remote_codec &
    else module "$m" & fi
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
if printf '%s\n' ${libraries[@]} | grep -qx TraceAnalysis; then module TraceAnalysis; fi
# shellcheck disable=SC2046  # the library list is words
for t in "${targets[@]}"; do target "$t" $(library "$t"); done
