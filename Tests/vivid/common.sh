# Sourced by Tests/vivid/run.sh and Tests/vivid/isa.sh: the repository root as the working directory, the
# toolchain on PATH, $PYTHON, $VIVID_RUN (the vivid-run script: $VIVID_RUN, else ../shared/vivid, else
# /work/shared/vivid) and `skip WHY`, which prints a loud banner naming $SUITE and exits 0 (2 with VIVID_REQUIRE=1).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
export PATH=/opt/swift/usr/bin:$PATH
PYTHON=${PYTHON:-python3}

VIVID_RUN=${VIVID_RUN:-}
if [ -z "$VIVID_RUN" ]; then
    for candidate in "$ROOT/../shared/vivid/vivid-run" /work/shared/vivid/vivid-run; do
        if [ -f "$candidate" ]; then VIVID_RUN=$candidate; break; fi
    done
fi
skip() {
    echo "" >&2
    echo "########################################################################" >&2
    echo "## $SUITE SKIPPED: $1" >&2
    echo "## (install qemu-system-x86 / run as root)" >&2
    echo "########################################################################" >&2
    [ "${VIVID_REQUIRE:-0}" = 1 ] && exit 2
    exit 0
}
[ -n "$VIVID_RUN" ] || skip "vivid-run not found (looked in ../shared/vivid and /work/shared/vivid)"
