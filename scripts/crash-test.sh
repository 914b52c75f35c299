#!/usr/bin/env bash
# kill -9 crash test (RocksDB's db_crashtest.py, blackbox mode): run `strata stress` on
# one database with a random option set, kill it with SIGKILL after a random 1-8 s,
# verify every key against the expected state, repeat. The database has two data
# paths (the database directory and `<db>-slow`) for the whole run; each cycle picks
# a tiering mode over them (off, fat, time-aware or HotRAP with random ablations).
#
#   scripts/crash-test.sh            # 20 cycles
#   scripts/crash-test.sh 100        # 100 cycles (or CRASH_CYCLES=100)
#
# Environment:
#   CRASH_CYCLES=20        cycles (the first argument wins)
#   CRASH_SEED=<n>         seed of the option/sleep choices (default: from the clock;
#                          printed, so a run can be replayed)
#   CRASH_MIN_SLEEP=1 CRASH_MAX_SLEEP=8   seconds each stress run lives
#   CRASH_MAX_KEY=20000 CRASH_THREADS=4   key space (per family) and writer threads
#   CRASH_FAMILIES=3       column families (writes in all, batches spanning them)
#   CRASH_DIR=<dir>        where the database lives (default: a new temp dir)
#   CRASH_KEEP=1           keep the directory after a successful run
#   STRATA_BIN=<path>      use this binary instead of building target/release/strata
#   CRASH_NO_SPACE=<MiB>   full-disk mode (root only): the database lives on a tmpfs
#                          that starts at this many MiB and is kept nearly full (each
#                          cycle starts with 1 MiB free); the
#                          stress runs with --on_no_space=wait, and each cycle the script
#                          waits for the disk to fill (the stress prints "no_space:
#                          refused"), leaves it full for CRASH_FULL_FOR=1 s, grows it by
#                          CRASH_GROW=8 MiB while the same process keeps writing, and
#                          measures the time from the grow to the first accepted write
#                          (the stress's "no_space: resumed" line); then the kill and the
#                          verify as usual (the tmpfs grown first: an open writes files).
#
# What is checked: after each kill, `strata stress --verify_only` reopens the database
# and every key of every column family must hold its last acknowledged value (or, for
# the write that was in flight, the old or the new one); each family's scan must agree
# with its point reads; every block checksum of every live table must hold. A kill is a process crash, so the OS
# keeps written pages: with --sync on or off, nothing acknowledged may be lost.
# Exit status: 0 if every cycle verified, 1 at the first failure (its logs are kept
# and printed), 2 for a setup problem.
set -uo pipefail
cd "$(dirname "$0")/.."

cycles=${1:-${CRASH_CYCLES:-20}}
seed=${CRASH_SEED:-$(( $(date +%s) % 32768 ))}
min_sleep=${CRASH_MIN_SLEEP:-1}
max_sleep=${CRASH_MAX_SLEEP:-8}
max_key=${CRASH_MAX_KEY:-20000}
threads=${CRASH_THREADS:-4}
families=${CRASH_FAMILIES:-3}
RANDOM=$seed

no_space=${CRASH_NO_SPACE:-}
full_for=${CRASH_FULL_FOR:-1}
grow=${CRASH_GROW:-8}

if [ -n "${STRATA_BIN:-}" ]; then
    bin=$STRATA_BIN
else
    export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
    echo "== building strata (release)"
    cargo build --release -q -p strata-cli || exit 2
    bin=target/release/strata
fi

dir=${CRASH_DIR:-$(mktemp -d -t strata-crash.XXXXXX)}
mkdir -p "$dir"
db="$dir/db"
rm -rf "$db" "$db.expected"
expected="$dir/db.expected"
mnt=""
if [ -n "$no_space" ]; then
    # The database on a tmpfs of its own; logs and the expected state stay outside.
    mnt="$dir/disk"
    mkdir -p "$mnt"
    if ! mount -t tmpfs -o "size=${no_space}m" tmpfs "$mnt"; then
        echo "CRASH_NO_SPACE needs root (mount -t tmpfs)"
        exit 2
    fi
    trap 'umount "$mnt" 2>/dev/null' EXIT
    db="$mnt/db"
fi
disk_used_kib() { df -k --output=used "$mnt" | tail -n 1 | tr -d ' '; }
resize_disk() { # resize_disk KIB
    mount -o remount,size="$1"k "$mnt"
}
now_ms() { date +%s%3N; }
# Two data paths for the whole run (a table stays on the path it was written to, so
# every open, the verifying ones too, must name both): the database directory and a
# sibling, which tiering uses as its fast and slow tiers.
rm -rf "$db-slow"
paths=("--db_paths=$db:$(( (RANDOM % 2 == 0 ? 256 : 4096) * 1024 )),$db-slow:0")
# Waits up to $2 seconds for a line matching $1 in file $3 at or after line $4;
# prints the line.
wait_line() {
    local deadline=$(( $(date +%s) + $2 ))
    while [ "$(date +%s)" -le "$deadline" ]; do
        local l
        l=$(tail -n +"$4" "$3" | grep -m1 -- "$1")
        if [ -n "$l" ]; then echo "$l"; return 0; fi
        sleep 0.05
    done
    return 1
}

# The choices run in this shell, never in a command substitution: bash reseeds
# RANDOM in a subshell, so `$(pick ...)` would not follow CRASH_SEED.
pick() { # pick CHOICE...: sets $picked to one of the choices at random
    local a=("$@")
    picked=${a[RANDOM % ${#a[@]}]}
}
opt() { # opt NAME CHOICE...: appends --NAME=<one of the choices> to opts
    local name=$1
    shift
    pick "$@"
    opts+=("--$name=$picked")
}
flag() { # flag FLAG N: appends FLAG to opts with probability 1/N
    pick "$1" $(seq 2 "$2")
    if [ "$picked" = "$1" ]; then opts+=("$1"); fi
}

# Two tiers on the run's two data paths, each cycle in another mode (turning tiering on
# or off across opens is allowed): a fast budget of L0 and L1, or twice that, so a
# cycle's data reaches the slow path once L1 fills. HotRAP with random ablations:
# without the hotness check every copy a read caches is promoted, so the promotion
# pathways run under the stress's uniform reads too.
tiering_options() { # tiering_options MAX_BYTES_FOR_LEVEL_BASE
    pick 2 4
    local fd=$(( $1 * picked ))
    pick off fat time hotrap hotrap
    opts+=("--tiering=$picked")
    case $picked in
    off) ;;
    fat) opts+=("--fd_size=$fd") ;;
    time) opts+=("--fd_size=$fd"); opt time_aware_window 1 3 ;;
    *)
        opts+=("--fd_size=$fd")
        flag --no_hotness_check 2
        flag --no_retain 3
        flag --no_promote_by_compaction 3
        flag --hot_set_limit=65536 2
        ;;
    esac
}

random_options() { # sets the array opts
    opts=()
    pick 65536 1048576 16777216
    local base=$picked
    # Delayed compaction on half the time; --vct, --vsmt and --virtual_garbage_ratio
    # are ignored when it is off.
    opt delayed_compaction true false
    opt vct 3 8 12
    opt vsmt 2 3 5
    opt virtual_garbage_ratio 0.05 0.1 0.5
    opt compression_type none lz4 zstd
    opt write_buffer_size 16384 65536 262144 4194304
    opt target_file_size_base 8192 65536 2097152
    opts+=("--max_bytes_for_level_base=$base")
    opt level0_file_num_compaction_trigger 2 4
    opt compaction_output_partitioning fixed aligned
    opt compaction_pri min_overlapping_ratio oldest_smallest_seq_first
    opt snapshot_filter true false
    opt bloom_bits 0 10
    opt block_size 256 4096
    opt cache_size 0 1048576 33554432
    opt max_background_jobs 2 3 4
    opt paranoid_checks false true
    opt sync false false false true
    opt flush_one_in 0 1000 5000
    opt compact_range_one_in 0 5000 20000
    tiering_options "$base"
}

field() { # field NAME LINE
    echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

echo "== crash test: $cycles cycles, seed $seed, dir $dir, max_key $max_key, threads $threads," \
    "column families $families${no_space:+, full disk: tmpfs of ${no_space} MiB grown by ${grow} MiB}"
start=$(date +%s)
acked=0
fills=0
resume_ms=()
verified=0
in_flight_new=0
in_flight_old=0
for i in $(seq 1 "$cycles"); do
    random_options
    existing=""
    [ "$i" -gt 1 ] && existing="--use_existing_db"
    sleep_s=$(( min_sleep + RANDOM % (max_sleep - min_sleep + 1) ))
    stress_seed=$(( seed * 1000 + i ))
    space_flags=""
    if [ -n "$no_space" ]; then
        # Nearly full again: room for 1 MiB more than the database holds, so the
        # disk fills within seconds whatever the options.
        resize_disk $(( $(disk_used_kib) + 1024 ))
        space_flags="--on_no_space=wait"
    fi
    # shellcheck disable=SC2086
    "$bin" stress --db="$db" $existing --seed=$stress_seed --max_key="$max_key" \
        --threads="$threads" --column_families="$families" --duration=3600 \
        --ops_per_thread=0 --expected_state="$expected" $space_flags "${paths[@]}" "${opts[@]}" \
        >"$dir/stress.$i.log" 2>&1 &
    pid=$!
    resumed=""
    if [ -n "$no_space" ]; then
        # The disk fills; it stays full a while; then it grows under the writer, by
        # another CRASH_GROW MiB every 10 s while nothing is accepted (up to four
        # times: a flush may need more than one grow). A streak the engine ends by
        # itself (compactions free space), before the grow, is not measured: the
        # script waits for the next one.
        from=1
        deadline=$(( $(date +%s) + 30 ))
        while [ -z "$resumed" ] && [ "$(date +%s)" -lt "$deadline" ] \
            && wait_line "no_space: refused" 30 "$dir/stress.$i.log" "$from" >/dev/null; do
            sleep "$full_for"
            from=$(( $(wc -l <"$dir/stress.$i.log") + 1 ))
            if ! head -n $(( from - 1 )) "$dir/stress.$i.log" | grep "no_space:" | tail -n 1 \
                | grep -q "^no_space: refused"; then
                continue
            fi
            grows=0
            while [ "$grows" -lt 4 ]; do
                grown_at=$(now_ms)
                resize_disk $(( $(df -k --output=size "$mnt" | tail -n 1 | tr -d ' ') + grow * 1024 ))
                grows=$(( grows + 1 ))
                if line=$(wait_line "no_space: resumed" 10 "$dir/stress.$i.log" "$from"); then
                    at=$(field unix_ms "$line")
                    if [ "$at" -ge "$grown_at" ]; then
                        resumed=$(( at - grown_at ))
                        resume_ms+=("$resumed")
                        fills=$(( fills + 1 ))
                    fi
                    from=$(( $(wc -l <"$dir/stress.$i.log") + 1 ))
                    break
                fi
            done
            if [ "$grows" -ge 4 ] && [ -z "$resumed" ]; then
                echo "FAIL cycle $i: no write accepted after the disk grew by $(( 4 * grow )) MiB; options: ${opts[*]}"
                kill -9 "$pid" 2>/dev/null
                cat "$dir/stress.$i.log"
                exit 1
            fi
        done
    fi
    sleep "$sleep_s"
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"
        echo "FAIL cycle $i: stress exited before the kill (status $?); options: ${opts[*]}"
        cat "$dir/stress.$i.log"
        exit 1
    fi
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    if [ -n "$no_space" ]; then
        # Room for the open's new MANIFEST, WAL and OPTIONS.
        resize_disk $(( $(disk_used_kib) + 16 * 1024 ))
    fi
    if ! "$bin" stress --db="$db" "${paths[@]}" --verify_only --expected_state="$expected" \
        >"$dir/verify.$i.log" 2>&1; then
        echo "FAIL cycle $i after ${sleep_s}s (stress seed $stress_seed); options: ${opts[*]}"
        cat "$dir/verify.$i.log"
        echo "logs and database kept in $dir"
        exit 1
    fi
    line=$(tail -n 1 "$dir/verify.$i.log")
    total=$(field acked_writes_total "$line")
    new=$(field in_flight_new "$line")
    old=$(field in_flight_old "$line")
    keys=$(field keys "$line")
    printf 'cycle %3d: %ds, tiering %-6s acked writes %7d, keys verified %d (present %s), in flight new/old %s/%s, blocks %s%s\n' \
        "$i" "$sleep_s" "$(field --tiering "${opts[*]}")," $(( total - acked )) "$keys" "$(field present "$line")" "$new" "$old" \
        "$(field blocks_checked "$line")" "${resumed:+, writes taken ${resumed} ms after the disk grew}"
    acked=$total
    verified=$(( verified + keys ))
    in_flight_new=$(( in_flight_new + new ))
    in_flight_old=$(( in_flight_old + old ))
done
elapsed=$(( $(date +%s) - start ))
space_summary=""
if [ -n "$no_space" ]; then
    sorted=$(printf '%s\n' "${resume_ms[@]}" | sort -n)
    n=${#resume_ms[@]}
    if [ "$n" -gt 0 ]; then
        median=$(echo "$sorted" | sed -n "$(( (n + 1) / 2 ))p")
        max=$(echo "$sorted" | tail -n 1)
        space_summary=", disk filled in $fills cycles, writes taken again after the grow in median ${median} ms (max ${max} ms, $n measured)"
    else
        space_summary=", disk filled in $fills cycles"
    fi
fi
echo "== crash test passed: cycles $cycles, acknowledged writes $acked, keys verified $verified," \
    "in-flight writes found applied $in_flight_new / not applied $in_flight_old," \
    "lost writes 0, failures 0, seed $seed, ${elapsed}s$space_summary"
if [ -n "$mnt" ]; then
    umount "$mnt"
fi
if [ "${CRASH_KEEP:-0}" != 1 ] && [ -z "${CRASH_DIR:-}" ]; then
    rm -rf "$dir"
fi
