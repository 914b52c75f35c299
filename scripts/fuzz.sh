#!/usr/bin/env bash
# Runs every cargo-fuzz target of Strata for a while and summarises the runs.
#
#   scripts/fuzz.sh                 # about a minute per target (FUZZ_SECONDS=60)
#   scripts/fuzz.sh --soak          # an hour per target (FUZZ_SECONDS=3600 unless set)
#   scripts/fuzz.sh block wal       # only these targets
#   FUZZ_SECONDS=300 scripts/fuzz.sh sst
#
# Needs no nightly toolchain: cargo-fuzz's unstable flags are enabled on stable with
# RUSTC_BOOTSTRAP=1, and the targets run without a sanitizer (the decoders fuzzed here
# are safe Rust; the engine's only unsafe code, the memtable arena and skiplist, is
# checked under Miri instead). The property fuzzed is "never panics, round trips hold".
#
# New interesting inputs go to fuzz/work/corpus/<target>/ (ignored by git), so the
# committed seed corpus fuzz/corpus/<target>/ stays small; to keep a few, minimise them
# with `cargo fuzz cmin` and copy them over. A crash input is copied to
# fuzz/regressions/<target>/, which `cargo test -p strata-fuzz-checks --test
# fuzz_corpus` replays as an ordinary test. Exit status: 1 if any target crashed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

soak=0
targets=()
for arg in "$@"; do
    case "$arg" in
        --soak) soak=1 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) targets+=("$arg") ;;
    esac
done
if [ ${#targets[@]} -eq 0 ]; then
    targets=(block sst wal manifest batch options catalog backup_meta)
fi
if [ "$soak" = 1 ]; then
    seconds=${FUZZ_SECONDS:-3600}
else
    seconds=${FUZZ_SECONDS:-60}
fi

export RUSTC_BOOTSTRAP=1
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked || exit 2
fi

echo "== building fuzz targets"
(cd fuzz && cargo fuzz build --sanitizer none) || exit 2

logs="$root/fuzz/work/logs"
mkdir -p "$logs"
summary=()
crashed=0
for t in "${targets[@]}"; do
    if [ ! -f "fuzz/fuzz_targets/$t.rs" ]; then
        echo "unknown target: $t" >&2
        exit 2
    fi
    work="$root/fuzz/work/corpus/$t"
    artifacts="$root/fuzz/artifacts/$t"
    mkdir -p "$work" "$artifacts"
    before=$(ls "$artifacts" | sort)
    echo "== fuzzing $t for ${seconds}s"
    log="$logs/$t.log"
    (cd fuzz && cargo fuzz run "$t" --sanitizer none "$work" "$root/fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 \
        -artifact_prefix="$artifacts/" -print_final_stats=1) >"$log" 2>&1
    rc=$?
    runs=$(grep -oE 'Done [0-9]+ runs' "$log" | tail -1 | grep -oE '[0-9]+')
    if [ -z "$runs" ]; then
        runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
    fi
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
    found=""
    for a in $(ls "$artifacts" | sort); do
        if ! grep -qx "$a" <<<"$before"; then
            mkdir -p "fuzz/regressions/$t"
            cp "$artifacts/$a" "fuzz/regressions/$t/$a"
            found="$found $a"
        fi
    done
    status=ok
    if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
        status="CRASH (rc=$rc):${found:- see $log}"
        crashed=1
        grep -m1 -A3 "panicked at" "$log" || tail -20 "$log"
    fi
    summary+=("$(printf '%-9s %12s runs  cov %-6s %s' "$t" "${runs:-?}" "${cov:-?}" "$status")")
done

echo
echo "== summary (${seconds}s per target; logs in fuzz/work/logs/)"
printf '%s\n' "${summary[@]}"
if [ "$crashed" = 1 ]; then
    echo "crash inputs copied to fuzz/regressions/<target>/; replay with:"
    echo "  cargo test -p strata-fuzz-checks --test fuzz_corpus"
fi
exit "$crashed"
