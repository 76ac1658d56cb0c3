#!/usr/bin/env bash
# Pass-through throughput: `colorcam replay --pace asap --output` vs `ffmpeg -i in.y4m -f yuv4mpegpipe -y out.y4m`
# on the same 640x480 clip, in one script. Prints each tool's median wall time over RUNS runs and the ratio.
# Target (stream-spine issue): colorcam at least half as fast as ffmpeg, i.e. time ratio colorcam/ffmpeg ≤ 2.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${COLORCAM:-.build/release/colorcam}
RUNS=${RUNS:-7}
SECONDS_OF_VIDEO=${SECONDS_OF_VIDEO:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN" testclip "$work/in.y4m" --size 640x480 --fps 30 --seconds "$SECONDS_OF_VIDEO"
frames=$((SECONDS_OF_VIDEO * 30))
bytes=$(stat -c %s "$work/in.y4m")

median_ms() {  # runs "$@" RUNS times, prints the median wall time in ms
  local times=()
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

cat "$work/in.y4m" >/dev/null  # warm the page cache for both
ffmpeg_ms=$(median_ms ffmpeg -v error -i "$work/in.y4m" -f yuv4mpegpipe -y "$work/ff.y4m")
colorcam_ms=$(median_ms "$BIN" replay "$work/in.y4m" --passthrough --pace asap --quiet --output "$work/cc.y4m")
cmp -s <(ffmpeg -v error -i "$work/in.y4m" -f framemd5 -) <(ffmpeg -v error -i "$work/cc.y4m" -f framemd5 -) \
  || { echo "passthrough: colorcam output differs from its input" >&2; exit 1; }
awk -v f="$ffmpeg_ms" -v c="$colorcam_ms" -v n="$frames" -v b="$bytes" 'BEGIN {
  printf "clip: 640x480 4:2:0, %d frames, %.1f MB\n", n, b / 1e6
  printf "ffmpeg   median %6d ms  %7.0f fps  %6.0f MB/s\n", f, n / (f / 1000), b / 1e6 / (f / 1000)
  printf "colorcam median %6d ms  %7.0f fps  %6.0f MB/s\n", c, n / (c / 1000), b / 1e6 / (c / 1000)
  printf "ratio colorcam/ffmpeg time: %.2f (target <= 2.00: colorcam at least half as fast) -> %s\n", c / f, (c / f <= 2.0) ? "PASS" : "FAIL"
  exit (c / f <= 2.0) ? 0 : 1 }'
