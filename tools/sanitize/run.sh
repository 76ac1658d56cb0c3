#!/usr/bin/env bash
# Runs the unit test suite under the sanitizers (`make test-sanitize`):
#   tools/sanitize/run.sh [address] [thread]      (default: both, address first)
# Each sanitizer builds into its own scratch path (.build/asan, .build/tsan), so the normal .build is untouched and
# a second run rebuilds only what changed. Prints the wall time of each half (build, tests) and exits non-zero if
# either half fails: any sanitizer report fails the run (ASan/LSan/TSan make the test process exit non-zero).
# Suppressions (toolchain false positives only, each explained): tools/sanitize/lsan.supp, tools/sanitize/tsan.supp.
set -uo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
here=$PWD/tools/sanitize
# ASan: also check use-after-return and report every error with its allocation stack. LSan runs at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=1:strict_string_checks=1:detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=0}
# TSan: both stacks of a lock-order inversion; a report makes the process exit 66 at the end.
export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$here/tsan.supp:second_deadlock_stack=1:print_suppressions=0}

sanitizers=("$@")
((${#sanitizers[@]})) || sanitizers=(address thread)
status=0
summary=()
for sanitizer in "${sanitizers[@]}"; do
  case $sanitizer in
    address) scratch=.build/asan ;;
    thread) scratch=.build/tsan ;;
    *) echo "run.sh: unknown sanitizer '$sanitizer' (address or thread)" >&2; exit 64 ;;
  esac
  echo "== $sanitizer: building the tests into $scratch"
  start=$SECONDS
  $SWIFT build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
  rc=$?
  built=$SECONDS
  if ((rc == 0)); then
    echo "== $sanitizer: running the unit tests"
    $SWIFT test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch"
    rc=$?
  fi
  line="$sanitizer: build $((built - start)) s, tests $((SECONDS - built)) s, total $((SECONDS - start)) s"
  ((rc == 0)) && line+=" — passed" || line+=" — FAILED (exit $rc)"
  summary+=("$line")
  ((rc == 0)) || status=1
done
echo "== sanitizer runs"
printf '   %s\n' "${summary[@]}"
exit $status
