#!/usr/bin/env bash
# Mutation check of the files where a one-line bug loses or invents data: runs
# cargo-mutants (installed if missing) over them, area by area, with the fast tests that
# guard each area, within a time budget, and prints what survived. A tool, not a CI
# step: rerun it after each technique lands and record the survivors in
# docs/reliability.md ("Mutation testing").
#
#   scripts/mutants.sh                        # every area in turn, MUTANTS_BUDGET=3600 s
#   scripts/mutants.sh filter merge gc        # these areas only
#   scripts/mutants.sh crates/strata/src/sst/filter.rs   # files (or globs): one run
#   scripts/mutants.sh --list                 # areas, files, mutant counts, tests; runs nothing
#   scripts/mutants.sh --summary              # summarise the last results again; runs nothing
#   MUTANTS_BUDGET=900 scripts/mutants.sh range-del
#   MUTANTS_TESTS="model_based merge" scripts/mutants.sh merge
#
# Areas (files under crates/strata/src/)       tests besides the lib's unit tests
#   filter      sst/filter.rs                    model_based metamorphic filters_have_no_false_negatives
#   merge       compaction/merge_chain.rs        merge model_based metamorphic
#               merge/chain.rs
#   range-del   range_del/mod.rs                 range_delete model_based metamorphic
#               sst/range_del_block.rs           snapshot_visibility
#   gc          compaction/gc.rs                 model_based metamorphic range_delete merge
#               compaction/covered.rs            snapshot_visibility
#               compaction/executor.rs compaction/rewrite.rs
#               db/obsolete.rs
#   read        db/read.rs db/iter.rs            model_based metamorphic range_delete merge
#               iter/merging.rs iter/level.rs    snapshot_visibility filters_have_no_false_negatives
#               memtable/mod.rs
#   picker      compaction/picker.rs             model_based metamorphic
#   wal         wal/writer.rs wal/mod.rs         recovery fault_injection corruption
#   recovery    db/replay.rs db/open.rs          recovery fault_injection corruption
#               wal/reader.rs                    regression_torn_wal_tail_before_empty_wal
#   techniques  snapshot_filter.rs               model_based metamorphic snapshot_visibility
#               compaction/aligned.rs            fault_injection
#               compaction/delayed/mod.rs compaction/virtualize.rs
#               version/virtual_table.rs iter/clipped.rs
#               compaction/partitioner.rs
#               (add each technique's module here as it lands)
# MUTANTS_AREA_<area> (files) and MUTANTS_TESTS_<area> (tests) override one area, with
# `-` read as `_` (MUTANTS_AREA_range_del).
#
# Environment:
#   MUTANTS_BUDGET   seconds for the whole run, baselines included (3600). cargo-mutants
#                    has no budget of its own: when it runs out the current area's run is
#                    interrupted, the mutants tested so far are kept and summarised, and
#                    the rest (and later areas) are reported as untested. Mutants run in
#                    source order, areas in the order given.
#   MUTANTS_TESTS    integration tests (crates/strata/tests/<name>.rs) for every area,
#                    instead of each area's list. Names without a file are skipped with a
#                    note, so tests still being written can be listed already.
#   MUTANTS_LIB      1 (default): also run the lib's unit tests (first); 0: do not.
#   MUTANTS_SKIP     test names (substrings) not run: by default the lib's size-limit and
#                    MANIFEST byte-flip tests (sst::tests::limits, batch::tests::
#                    value_and_batch_limits, version::manifest::tests::flipped_byte),
#                    which take 7 of the lib's 12 s and guard no file of an area; "" runs all.
#   MUTANTS_PROFILE  cargo profile of the test build: `test` (default; incremental,
#                    opt-level 1) or `release`.
#   MUTANTS_DEBUGINFO  0 (default): strata itself is built without debug info (deps keep
#                    theirs), which makes each mutant's rebuild and links cheaper; 1: as
#                    the profile says.
#   MUTANTS_TIMEOUT  seconds one mutant's tests may take; default: cargo-mutants sets it
#                    from the baseline × MUTANTS_TIMEOUT_MULTIPLIER (5), at least
#                    MUTANTS_MIN_TIMEOUT (60). With other builds on the machine a test
#                    run can take twice the baseline: a timeout may be a slow survivor.
#   CARGO_BUILD_JOBS rustc jobs (1). Mutants are tested one at a time (the copy is
#                    mutated in place, which cargo-mutants runs serially).
#   MUTANTS_DIR      scratch directory (target/mutants): the copy under test in tree/,
#                    its own target directory tree/target/, results in out/<area>/.
#   MUTANTS_ITERATE  1: pass --iterate (skip the mutants the previous run caught).
#   MUTANTS_ARGS     more cargo-mutants options, e.g. "--re 'VersionGc::keep'".
#   The tests' own knobs (STRATA_SEEDS, STRATA_CRASH_ITERS, ...) pass through.
#
# The tree under test is a copy: the tracked and untracked-but-not-ignored files of this
# checkout, copied into MUTANTS_DIR/tree (a file is rewritten only if it changed, so the
# copy's incremental build stays warm between runs) and mutated there in place, built in
# its own target directory: the checkout and its target/ are never touched. In the copy,
# lib.rs's `internal_modules!(...)` is written out as plain `mod x;` lines, because
# cargo-mutants finds modules only through `mod` items and would otherwise skip every
# module that macro declares (all but env and merge). The copy is built without the
# `internals` feature, as `cargo test -p strata` is.
#
# Output: MUTANTS_DIR/out/<area>/mutants.out/ (cargo-mutants' caught.txt, missed.txt,
# timeout.txt, unviable.txt, outcomes.json, log/ with each mutant's diff and test
# output), a summary per file on stdout and in MUTANTS_DIR/out/summary.txt.
# Exit status: 0 if the runs finished or the budget ran out (survivors are reported,
# not an error); 1 if cargo-mutants failed otherwise (e.g. a baseline test failed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

AREA_ORDER=(filter merge range-del gc read picker wal recovery techniques)
declare -A AREAS=(
    [filter]="sst/filter.rs"
    [merge]="compaction/merge_chain.rs merge/chain.rs"
    [range-del]="range_del/mod.rs sst/range_del_block.rs"
    [gc]="compaction/gc.rs compaction/covered.rs compaction/executor.rs compaction/rewrite.rs db/obsolete.rs"
    [read]="db/read.rs db/iter.rs iter/merging.rs iter/level.rs memtable/mod.rs"
    [picker]="compaction/picker.rs"
    [wal]="wal/writer.rs wal/mod.rs"
    [recovery]="db/replay.rs db/open.rs wal/reader.rs"
    [techniques]="snapshot_filter.rs compaction/aligned.rs compaction/partitioner.rs compaction/delayed/mod.rs compaction/virtualize.rs version/virtual_table.rs iter/clipped.rs"
)
declare -A AREA_TESTS=(
    [filter]="model_based metamorphic filters_have_no_false_negatives"
    [merge]="merge model_based metamorphic"
    [range-del]="range_delete model_based metamorphic snapshot_visibility"
    [gc]="model_based metamorphic range_delete merge snapshot_visibility"
    [read]="model_based metamorphic range_delete merge snapshot_visibility filters_have_no_false_negatives"
    [picker]="model_based metamorphic"
    [wal]="recovery fault_injection corruption"
    [recovery]="recovery fault_injection corruption regression_torn_wal_tail_before_empty_wal"
    [techniques]="model_based metamorphic snapshot_visibility fault_injection"
    [files]="model_based metamorphic merge range_delete recovery fault_injection snapshot_visibility filters_have_no_false_negatives"
)
for a in "${AREA_ORDER[@]}" files; do
    v="MUTANTS_AREA_${a//-/_}"
    if [ -n "${!v:-}" ]; then AREAS[$a]=${!v}; fi
    v="MUTANTS_TESTS_${a//-/_}"
    if [ -n "${!v:-}" ]; then AREA_TESTS[$a]=${!v}; fi
    if [ -n "${MUTANTS_TESTS:-}" ]; then AREA_TESTS[$a]=$MUTANTS_TESTS; fi
done

budget=${MUTANTS_BUDGET:-3600}
with_lib=${MUTANTS_LIB:-1}
skip=${MUTANTS_SKIP-sst::tests::limits batch::tests::value_and_batch_limits version::manifest::tests::flipped_byte}
profile=${MUTANTS_PROFILE:-test}
dir=${MUTANTS_DIR:-$root/target/mutants}
tree="$dir/tree"
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
export CARGO_TERM_COLOR=never
export RUST_BACKTRACE=0 # a caught mutant panics; capturing backtraces only slows it

mode=run
selected=()
for arg in "$@"; do
    case "$arg" in
        --list) mode=list ;;
        --summary) mode=summary ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) selected+=("$arg") ;;
    esac
done

# The runs: one per area named, plus one ("files") for the files and globs named.
runs=()
explicit=()
for s in "${selected[@]}"; do
    if [ -n "${AREAS[$s]+x}" ]; then
        runs+=("$s")
    elif [ -e "$s" ] || [[ "$s" == *'*'* ]]; then
        explicit+=("$s")
    elif [ -e "crates/strata/src/$s" ]; then
        explicit+=("crates/strata/src/$s")
    else
        echo "unknown area or file: $s (areas: ${AREA_ORDER[*]})" >&2
        exit 2
    fi
done
if [ ${#explicit[@]} -gt 0 ]; then runs+=(files); fi
if [ ${#selected[@]} -eq 0 ]; then runs=("${AREA_ORDER[@]}"); fi

# The files of a run, as paths from the workspace root (what --file globs match).
run_files() {
    if [ "$1" = files ]; then
        printf '%s\n' "${explicit[@]}"
    else
        for f in ${AREAS[$1]}; do echo "crates/strata/src/$f"; done
    fi
}

# The cargo test target arguments of a run; the missing ones go to stderr.
run_targets() {
    local t missing=()
    [ "$with_lib" != 1 ] || echo "--lib"
    for t in ${AREA_TESTS[$1]}; do
        if [ -f "crates/strata/tests/$t.rs" ]; then echo "--test=$t"; else missing+=("$t"); fi
    done
    [ ${#missing[@]} -eq 0 ] || echo "   (no such test file yet, skipped: ${missing[*]})" >&2
}

# The number of mutants in the given files or globs of the copy.
count_mutants() {
    local fa=() f
    for f in "$@"; do fa+=(--file "$f"); done
    cargo mutants --dir "$tree" -p strata "${fa[@]}" --list | wc -l
}

summary() {
    local tot=0 tc=0 tm=0 tt=0 tu=0 run f g n c m t u out
    count() { if [ -f "$out/$1.txt" ]; then grep -c "^$2:" "$out/$1.txt" || true; else echo 0; fi; }
    printf '%-10s %-32s %7s %7s %7s %7s %8s %8s\n' area file mutants caught missed timeout unviable untested
    for run in "${runs[@]}"; do
        out="$dir/out/$run/mutants.out"
        while read -r f; do
            for g in $(cd "$tree" && compgen -G "$f" || true); do
                n=$(count_mutants "$g")
                c=$(count caught "$g"); m=$(count missed "$g"); t=$(count timeout "$g"); u=$(count unviable "$g")
                printf '%-10s %-32s %7d %7d %7d %7d %8d %8d\n' "$run" "${g#crates/strata/src/}" \
                    "$n" "$c" "$m" "$t" "$u" $((n - c - m - t - u))
                tot=$((tot + n)); tc=$((tc + c)); tm=$((tm + m)); tt=$((tt + t)); tu=$((tu + u))
            done
        done < <(run_files "$run")
    done
    printf '%-10s %-32s %7d %7d %7d %7d %8d %8d\n' total "" "$tot" "$tc" "$tm" "$tt" "$tu" \
        $((tot - tc - tm - tt - tu))
    for run in "${runs[@]}"; do
        out="$dir/out/$run/mutants.out"
        if [ -s "$out/missed.txt" ]; then
            echo
            echo "== $run: missed (survivors; classify each in docs/reliability.md)"
            sed 's|^crates/strata/src/||' "$out/missed.txt"
        fi
        if [ -s "$out/timeout.txt" ]; then
            echo
            echo "== $run: timeouts (counted as caught by a hang; check none is a slow survivor)"
            sed 's|^crates/strata/src/||' "$out/timeout.txt"
        fi
    done
}

if ! cargo mutants --version >/dev/null 2>&1; then
    echo "== installing cargo-mutants"
    cargo install cargo-mutants --locked
fi

if [ "$mode" = summary ]; then
    summary
    exit 0
fi

# -- The copy under test ------------------------------------------------------------
mkdir -p "$tree"
echo "== syncing the copy in $tree"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
git ls-files -z --cached --others --exclude-standard | sort -z >"$list"
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue # deleted in the work tree, not yet in the index
    if ! cmp -s "$f" "$tree/$f" 2>/dev/null; then
        mkdir -p "$tree/$(dirname "$f")"
        cp "$f" "$tree/$f" # a fresh mtime, so cargo rebuilds what changed
    fi
done <"$list"
# Files gone from the checkout go from the copy too (its target/ stays).
(cd "$tree" && find . -path ./target -prune -o -type f -print0 | sed -z 's|^\./||' | sort -z) |
    comm -z -23 - "$list" | while IFS= read -r -d '' f; do rm -f "$tree/$f"; done
# Plain `mod` items for the modules lib.rs declares through `internal_modules!`.
lib="$tree/crates/strata/src/lib.rs"
perl -0pe 's{^internal_modules!\(\s*(.*?)\);}{
        "// scripts/mutants.sh: internal_modules! written out so cargo-mutants finds the modules.\n"
        . "#[cfg(feature = \"internals\")]\ncompile_error!(\"the mutants copy is built without `internals`\");\n"
        . join("", map { "mod $_;\n" } grep { length } map { s/\s+//gr } split(/,/, $1))
    }sme or die "scripts/mutants.sh: no internal_modules!(...) invocation in lib.rs\n"' \
    "crates/strata/src/lib.rs" >"$lib.new"
if cmp -s "$lib.new" "$lib"; then rm "$lib.new"; else mv "$lib.new" "$lib"; fi

echo "== runs (commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + uncommitted changes'), profile $profile, budget ${budget}s)"
for run in "${runs[@]}"; do
    mapfile -t fs < <(run_files "$run")
    echo "-- $run: $(count_mutants "${fs[@]}") mutants; tests: $(run_targets "$run" 2>/dev/null | tr '\n' ' ')"
    run_targets "$run" 2>&1 >/dev/null || true
    for f in "${fs[@]}"; do
        n=$(count_mutants "$f")
        printf '   %4d  %s\n' "$n" "$f"
        [ "$n" -gt 0 ] || echo "         (no mutants: is the file reached through a mod item?)"
    done
done
[ "$mode" = run ] || exit 0

# -- The runs, cut at the budget -----------------------------------------------------------
start=$(date +%s)
failed=0
declare -A how
for run in "${runs[@]}"; do
    left=$((budget - ($(date +%s) - start)))
    if [ "$left" -le 0 ]; then how[$run]="not run (budget spent)"; continue; fi
    mapfile -t fs < <(run_files "$run")
    mapfile -t targets < <(run_targets "$run" 2>/dev/null)
    margs=(--dir "$tree" -p strata --in-place --cap-lints=true
        --jobserver-tasks "$CARGO_BUILD_JOBS" --colors never --output "$dir/out/$run"
        --minimum-test-timeout "${MUTANTS_MIN_TIMEOUT:-60}"
        --timeout-multiplier "${MUTANTS_TIMEOUT_MULTIPLIER:-5}")
    [ "$profile" = test ] || margs+=(--profile "$profile")
    [ "${MUTANTS_DEBUGINFO:-0}" = 1 ] || margs+=("--cargo-arg=--config=profile.$profile.package.strata.debug=0")
    [ -z "${MUTANTS_TIMEOUT:-}" ] || margs+=(--timeout "$MUTANTS_TIMEOUT")
    [ "${MUTANTS_ITERATE:-0}" != 1 ] || margs+=(--iterate)
    for f in "${fs[@]}"; do margs+=(--file "$f"); done
    # The test targets go to every cargo invocation (--cargo-arg), not only to `cargo
    # test` after `--`: the build phase (`cargo test --no-run`) would otherwise build all
    # two dozen test binaries of the crate for every mutant.
    for t in "${targets[@]}"; do margs+=("--cargo-arg=$t"); done
    if [ -n "$skip" ]; then
        margs+=(--cargo-test-arg=--)
        for t in $skip; do margs+=(--cargo-test-arg=--skip "--cargo-test-arg=$t"); done
    fi
    if [ -n "${MUTANTS_ARGS:-}" ]; then
        eval "extra=($MUTANTS_ARGS)"
        margs+=("${extra[@]}")
    fi
    mkdir -p "$dir/out/$run"
    echo
    echo "== $run: cargo mutants, ${left}s of the budget left"
    t0=$(date +%s)
    status=0
    # On SIGINT cargo-mutants stops the test, restores the file and keeps what it has.
    timeout --signal=INT --kill-after=120 "$left" cargo mutants "${margs[@]}" || status=$?
    t1=$(date +%s)
    case $status in
        0 | 2 | 3) how[$run]="finished in $((t1 - t0))s" ;; # 2: survivors, 3: timeouts
        124 | 137) how[$run]="stopped at the budget after $((t1 - t0))s" ;;
        *) how[$run]="failed after $((t1 - t0))s (exit $status; see $dir/out/$run/mutants.out/debug.log)"
           failed=1 ;;
    esac
    echo "-- $run: ${how[$run]}"
done

echo
echo "== summary after $(($(date +%s) - start))s"
for run in "${runs[@]}"; do echo "   $run: ${how[$run]}"; done
summary | tee "$dir/out/summary.txt"
echo
echo "results: $dir/out/<area>/mutants.out/"
exit $failed
