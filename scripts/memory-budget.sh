#!/usr/bin/env bash
# Peak resident memory under one memory budget (issue 34 item 3; docs/performance.md):
# `strata bench` fillrandom then readrandom, 1 KiB values over 8 column families,
# index and filter blocks in the cache, for each budget and each engine, one process
# per run (peak RSS is per process: /usr/bin/time's maximum resident set size), the
# engines alternating within each round.
#
#   scripts/memory-budget.sh                 # budgets 0 64 256 1024 MiB, 1 round
#   BUDGETS="64 256" ROUNDS=2 NUM=500000 scripts/memory-budget.sh
#
# Environment:
#   BUDGETS="0 64 256 1024"   MiB; 0 runs without a budget (each family's memtables
#                             bounded by --write_buffer_size, the cache by --cache_size)
#   ENGINES="strata rocksdb"  (rocksdb needs the `rocksdb` feature)
#   NUM=1000000 READS=200000 ROUNDS=1
#   STRATA_BIN=<path>         default: builds target/release/strata with --features rocksdb
#   DIR=/tmp/strata-memory-budget   scratch space; the logs and JSON lines stay there
#
# Output: one line per run, `engine budget_mib round peak_rss_mib fill_ops_s
# read_ops_s`, and a JSON line per run in $DIR/memory-budget.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."

budgets=${BUDGETS:-0 64 256 1024}
engines=${ENGINES:-strata rocksdb}
num=${NUM:-1000000}
reads=${READS:-200000}
rounds=${ROUNDS:-1}
if [ -n "${STRATA_BIN:-}" ]; then
    bin=$STRATA_BIN
else
    cargo build --release -q -p strata-cli --features rocksdb
    bin=target/release/strata
fi
dir=${DIR:-/tmp/strata-memory-budget}
mkdir -p "$dir"
out="$dir/memory-budget.jsonl"
: >"$out"

ops_of() { # ops_of BENCH FILE: ops/sec of a benchmark line
    sed -n "s/^$1 *:.* \\([0-9.]*\\) ops\\/sec.*/\\1/p" "$2" | head -n 1
}

printf '%-8s %10s %5s %14s %12s %12s\n' engine budget_mib round peak_rss_mib fill_ops_s read_ops_s
for round in $(seq 1 "$rounds"); do
    for budget in $budgets; do
        for engine in $engines; do
            db="$dir/db-$engine"
            rm -rf "$db"
            log="$dir/$engine-$budget-$round.log"
            /usr/bin/time -f "maxrss_kb=%M" "$bin" bench --engine="$engine" --db="$db" \
                --benchmarks=fillrandom,readrandom --num="$num" --reads="$reads" \
                --value_size=1024 --num_column_families=8 \
                --cache_index_and_filter_blocks=true \
                --memory_budget=$((budget << 20)) --no_json >"$log" 2>&1
            rss_kb=$(sed -n 's/^maxrss_kb=//p' "$log")
            fill=$(ops_of fillrandom "$log")
            read=$(ops_of readrandom "$log")
            rss_mib=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
            printf '%-8s %10s %5s %14s %12s %12s\n' "$engine" "$budget" "$round" "$rss_mib" "$fill" "$read"
            printf '{"engine":"%s","budget_mib":%s,"round":%s,"peak_rss_kib":%s,"num":%s,"reads":%s,"fillrandom_ops_s":%s,"readrandom_ops_s":%s}\n' \
                "$engine" "$budget" "$round" "$rss_kb" "$num" "$reads" "${fill:-null}" "${read:-null}" >>"$out"
            rm -rf "$db"
        done
    done
done
echo "JSON lines: $out"
