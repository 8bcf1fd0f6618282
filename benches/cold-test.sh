#!/usr/bin/env bash
# Times `cargo test` from nothing built, for two commits side by side.
#
#     benches/cold-test.sh BEFORE [AFTER]
#
# Clones this repository twice into temporary folders, checks out BEFORE in
# one and AFTER (by default HEAD) in the other, and in each, one after the
# other, runs `cargo test` with an empty target folder: the wall time counts
# compiling everything and running every test, as on a fresh clone. It then
# prints both times, their ratio (BEFORE / AFTER), and the tests passed by
# each test binary of each run, so that a faster run is seen to run as many
# tests.
#
# Both runs share the caller's CARGO_HOME, so the crates must already be
# downloaded (`cargo fetch` once); the runs are offline, so no network time
# is counted. Nothing else heavy should run meanwhile: the two runs are
# compared on the same machine in the same state. It takes about ten
# minutes on two cores.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 BEFORE [AFTER]" >&2
    exit 2
fi
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
before=$(git -C "$repo" rev-parse --verify "$1^{commit}")
after=$(git -C "$repo" rev-parse --verify "${2:-HEAD}^{commit}")

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Each clone builds into its own, empty target folder.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR

# Runs `cargo test` from nothing in a fresh clone of commit $2, named $1;
# prints its wall time in seconds, and leaves its output in $scratch/$1.log.
cold_test() {
    local name=$1 commit=$2 dir="$scratch/$1"
    git clone --quiet --no-checkout "$repo" "$dir"
    git -C "$dir" checkout --quiet --detach "$commit"
    local start end status=0
    start=$(date +%s.%N)
    (cd "$dir" && cargo test --offline) >"$scratch/$name.log" 2>&1 || status=$?
    end=$(date +%s.%N)
    if [ "$status" -ne 0 ]; then
        echo "cargo test failed at $commit (exit $status):" >&2
        tail -n 40 "$scratch/$name.log" >&2
        exit 1
    fi
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", e - s }'
}

# How long a run's compiling took, as cargo reports it when it starts the tests.
built() {
    sed -n 's/.*Finished .* in \(.*\)$/compiled in \1/p' "$scratch/$1.log" | head -n 1
}

# The tests passed by each binary: `NAME PASSED`, from a run's output.
passed() {
    awk '/^ *Running/ { name = ($2 == "unittests") ? $3 : $2 }
         /^ *Doc-tests/ { name = "doc-tests" }
         /^test result:/ { sub(";", "", $4); print "    " name, $4 }' "$scratch/$1.log"
}

echo "cargo test from nothing built, $(nproc) cores:"
before_s=$(cold_test before "$before")
echo "  before ${before:0:10}: ${before_s} s ($(built before))"
after_s=$(cold_test after "$after")
echo "  after  ${after:0:10}: ${after_s} s ($(built after))"
awk -v b="$before_s" -v a="$after_s" 'BEGIN { printf "  ratio: %.2f\n", b / a }'
echo "tests passed, before:"
passed before
echo "tests passed, after:"
passed after
