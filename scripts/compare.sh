#!/usr/bin/env bash
# Side-by-side runs of several engines on one reference shape, alternating round-robin
# per repetition: with ENGINES="strata rocksdb fjall", strata rocksdb fjall strata
# rocksdb fjall ... (RUNS times each).
#
# Builds `strata` in release with the cargo features the engines need (`rocksdb`,
# `fjall`) and -C target-cpu=native (in its own target dir, so the ordinary build is not
# invalidated), then runs benchmark sets with identical flags on each engine, by
# default two:
#   1. fillrandom,readrandom  (--reads=$READS)
#   2. fillseq,readseq
# Every result (with peak RSS as VmHWM, W-Amp, P99, the option mapping, ...) is appended
# to $OUT/results.jsonl, and `strata compare` prints one table per benchmark: median
# ops/sec of each engine, the ratio of strata's median to each other engine's (or of
# the first engine's, without strata), P99, W-Amp and peak RSS. `strata plot` draws
# $OUT/ops_per_sec.svg, $OUT/write_amplification.svg and $OUT/peak_rss_kb.svg.
#
# YCSB=1 runs the YCSB core workloads instead of db_bench sets, in YCSB's order: per run
# and engine, a load of $RECORDS records, then A, B, C, F, D on that database
# ($OPERATIONS operations each), then a fresh load and E (D and E insert, so they go
# last, as in YCSB's documentation). Each load waits for its compactions before the
# workloads run and reports its settled rate too (`ycsb-<w>/load_settled`, the table
# loads are judged on). Defaults then: RECORDS=2000000,
# OPERATIONS=4000000, VALUE_SIZE=1000, THREADS=2, WORKLOADS="a b c f d e".
#
# Environment:
#   ENGINES="strata rocksdb"   engines to alternate, in this order (strata, rocksdb, fjall;
#                   rocksdb-floor and fjall-floor: `bench --floor`, the peer driven
#                   directly in the timed loops; the summary then also gives each
#                   adapter's ratio to its floor)
#   NUM=5000000     keys (use e.g. NUM=200000 for a quick run)
#   READS=500000    reads of readrandom (capped at NUM)
#   SEQ_READS=""    entries each readseq/readreverse walks (passes over the database;
#                   default --reads, i.e. NUM: one pass)
#   RUNS=3          runs per engine
#   THREADS=1       --threads of every run
#   VALUE_SIZE=100  --value_size of every run
#   SETS="fillrandom,readrandom fillseq,readseq"   benchmark sets, space-separated; each
#                   set runs on a fresh database (readrandom and seekrandom get
#                   --reads=$READS, seekrandom also --seek_nexts=10)
#   EXTRA=""        more flags for every run (e.g. EXTRA="--enable_pipelined_write=false")
#   DIRECT=1        the direct-I/O run: every engine reads and writes tables with O_DIRECT
#                   (--use_direct_reads --use_direct_io_for_flush_and_compaction) and gets
#                   a block cache of 1/8 of the data (NUM x (16 + VALUE_SIZE) bytes / 8),
#                   so most reads are device reads; DB_DIR must accept O_DIRECT
#   OUT=results/compare-<time>   output directory (databases go to $OUT/db unless DB_DIR)
#   SKIP_BUILD=1    reuse an existing binary (it must have the engines' features)
#   CARGO_BUILD_JOBS (default 1: the machine is shared)
#
# The RocksDB build takes 15-25 minutes on 2 cores and needs libclang; fjall (pure Rust)
# a few minutes. scripts/compare-rocksdb.sh is this script with ENGINES="strata rocksdb".
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
YCSB=${YCSB:-0}
NUM=${NUM:-5000000}
if [ "$YCSB" = 1 ]; then
  RECORDS=${RECORDS:-2000000}
  OPERATIONS=${OPERATIONS:-4000000}
  read -r -a WORKLOAD_LIST <<< "${WORKLOADS:-a b c f d e}"
  NUM=$RECORDS
  THREADS=${THREADS:-2}
  VALUE_SIZE=${VALUE_SIZE:-1000}
fi
THREADS=${THREADS:-1}
VALUE_SIZE=${VALUE_SIZE:-100}
read -r -a SET_LIST <<< "${SETS:-fillrandom,readrandom fillseq,readseq}"
read -r -a EXTRA_FLAGS <<< "${EXTRA:-}"
CACHE_SIZE=67108864
if [ "${DIRECT:-0}" = 1 ]; then
    EXTRA_FLAGS+=(--use_direct_reads=true --use_direct_io_for_flush_and_compaction=true)
    CACHE_SIZE=$(( NUM * (16 + VALUE_SIZE) / 8 ))
fi
READS=${READS:-500000}
RUNS=${RUNS:-3}
read -r -a ENGINE_LIST <<< "${ENGINES:-strata rocksdb}"
(( ${#ENGINE_LIST[@]} > 0 )) || { echo "error: ENGINES is empty" >&2; exit 1; }
OUT=${OUT:-$ROOT/results/compare-$(date +%Y%m%d-%H%M%S)}
DB_DIR=${DB_DIR:-$OUT/db}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/native}
BIN=$CARGO_TARGET_DIR/release/strata

if (( READS > NUM )); then READS=$NUM; fi

FEATURES=()
NEED_ROCKSDB=
for engine in "${ENGINE_LIST[@]}"; do
  case $engine in
    strata) ;;
    *-floor) if [ "$YCSB" = 1 ]; then echo "error: $engine: floors run db_bench sets (bench --floor), not YCSB" >&2; exit 1; fi ;;&
    rocksdb|rocksdb-floor) FEATURES+=(rocksdb); NEED_ROCKSDB=1 ;;
    fjall|fjall-floor) FEATURES+=(fjall) ;;
    *) echo "error: unknown engine '$engine' in ENGINES (strata, rocksdb, fjall, rocksdb-floor, fjall-floor)" >&2; exit 1 ;;
  esac
done
FEATURE_LIST=$(IFS=,; printf '%s\n' "${FEATURES[@]:-}" | sort -u | paste -sd,)

# librocksdb-sys always runs bindgen at build time, which loads libclang.
# bindgen loads libclang.so / libclang-<N>.so; libclang-cpp.so (which other packages
# install alone) is not it, so the globs leave it out.
have_libclang() {
  [[ -n "${LIBCLANG_PATH:-}" ]] && return 0
  compgen -G "/usr/lib/llvm-*/lib/libclang.so*" >/dev/null ||
    compgen -G "/usr/lib/llvm-*/lib/libclang-[0-9]*.so*" >/dev/null ||
    compgen -G "/usr/lib/*/libclang.so*" >/dev/null ||
    compgen -G "/usr/lib/*/libclang-[0-9]*.so*" >/dev/null
}
if [[ -z "${SKIP_BUILD:-}" && -n "$NEED_ROCKSDB" ]] && ! have_libclang; then
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    echo "installing libclang-dev (needed by the rocksdb crate's bindgen)..." >&2
    apt-get install -y libclang-dev >/dev/null || { apt-get update >/dev/null && apt-get install -y libclang-dev >/dev/null; }
  else
    echo "error: libclang not found: install libclang-dev (or set LIBCLANG_PATH)" >&2
    exit 1
  fi
fi

if [[ -z "${SKIP_BUILD:-}" ]]; then
  echo "building $BIN (release, features '${FEATURE_LIST}', target-cpu=native)..." >&2
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" \
    cargo build --release -p strata-cli ${FEATURE_LIST:+--features "$FEATURE_LIST"})
fi
[[ -x "$BIN" ]] || { echo "error: $BIN not found" >&2; exit 1; }

mkdir -p "$OUT" "$DB_DIR"
JSON=$OUT/results.jsonl
LOG=$OUT/runs.log

SHAPE=(
  --key_size=16 --value_size="$VALUE_SIZE"
  --write_buffer_size=8388608 --target_file_size_base=8388608
  --max_bytes_for_level_base=33554432 --max_bytes_for_level_multiplier=10
  --bloom_bits=10 "--cache_size=$CACHE_SIZE" --compression_type=none
  --max_background_jobs=2 --threads="$THREADS"
)

# What `bench --floor` drives (bench/floor.rs `covers`): a set with anything else
# runs without the floors.
FLOOR_BENCHMARKS="fillseq fillrandom overwrite deleterandom mergerandom readrandom readseq readreverse seekrandom flush compact waitforcompaction stats"
floor_covers() { # set: true iff a floor can run every benchmark of it
  local b
  for b in ${1//,/ }; do
    [[ " $FLOOR_BENCHMARKS " == *" $b "* ]] || return 1
  done
}
for engine in "${ENGINE_LIST[@]}"; do
  if [[ $engine == *-floor ]]; then
    case " ${EXTRA_FLAGS[*]:-} " in
      *--num_column_families=*|*--transaction_db*|*--optimistic_transaction_db*)
        echo "error: $engine: a floor drives one column family without transactions (EXTRA)" >&2; exit 1 ;;
    esac
    if [[ " ${ENGINE_LIST[*]} " != *" ${engine%-floor} "* ]]; then
      echo "warning: $engine runs without ${engine%-floor}: no adapter/floor ratio" >&2
    fi
  fi
done

TIME=()
if [[ -x /usr/bin/time ]]; then TIME=(/usr/bin/time -v); fi

run_one() { # engine, command, flags...: one run of `strata bench` or `strata ycsb`
  local engine=$1 command=$2; shift 2
  local engine_flags=(--engine="$engine")
  # `<peer>-floor`: the peer's own calls in the timed loops (`bench --floor`).
  if [[ $engine == *-floor ]]; then engine_flags=(--engine="${engine%-floor}" --floor); fi
  echo "== $engine $command $*" | tee -a "$LOG"
  "${TIME[@]}" "$BIN" "$command" "${engine_flags[@]}" --db="$DB_DIR/$engine" \
    "${SHAPE[@]}" "${EXTRA_FLAGS[@]}" "$@" --json="$JSON" 2>&1 \
    | grep -v '^\s*\(Command being timed\|User time\|System time\|Percent of CPU\|Elapsed\|Average\|Major\|Minor\|Voluntary\|Involuntary\|Swaps\|File system\|Socket\|Signals\|Page size\|Exit status\)' \
    | tee -a "$LOG"
}

ycsb_one() { # engine: the workloads of one run, on the databases they need
  local engine=$1 loaded= w
  local flags=(--records="$RECORDS" --operations="$OPERATIONS")
  for w in "${WORKLOAD_LIST[@]}"; do
    # E scans a database that D has not grown: it gets its own load, as in YCSB.
    if [[ -z $loaded || $w == e ]]; then
      rm -rf "${DB_DIR:?}/$engine"
      run_one "$engine" ycsb --workload="$w" --phase=load "${flags[@]}"
      loaded=1
    fi
    run_one "$engine" ycsb --workload="$w" --phase=run --use_existing_db "${flags[@]}"
  done
  rm -rf "${DB_DIR:?}/$engine"
}

if [ "$YCSB" = 1 ]; then
  for ((i = 1; i <= RUNS; i++)); do
    for engine in "${ENGINE_LIST[@]}"; do
      ycsb_one "$engine"
    done
  done
else
  for set in "${SET_LIST[@]}"; do
    SET_ENGINES=()
    for engine in "${ENGINE_LIST[@]}"; do
      if [[ $engine == *-floor ]] && ! floor_covers "$set"; then
        echo "note: $engine skips set $set (a floor drives only $FLOOR_BENCHMARKS)" | tee -a "$LOG"
      else
        SET_ENGINES+=("$engine")
      fi
    done
    SET_FLAGS=(--num="$NUM")
    case ,$set, in *,readrandom,*|*,seekrandom,*|*,readwhilewriting,*) SET_FLAGS+=(--reads="$READS") ;; esac
    case ,$set, in *,seekrandom,*) SET_FLAGS+=(--seek_nexts=10) ;; esac
    # Walks: --reads=$SEQ_READS entries, pass after pass (so a run can last long
    # enough to measure), in sets without random reads (they would share --reads).
    case ,$set, in
      *,readrandom,*|*,seekrandom,*|*,readwhilewriting,*) ;;
      *,readseq,*|*,readreverse,*) if [[ -n ${SEQ_READS:-} ]]; then SET_FLAGS+=(--reads="$SEQ_READS"); fi ;;
    esac
    for ((i = 1; i <= RUNS; i++)); do
      for engine in "${SET_ENGINES[@]}"; do
        run_one "$engine" bench --benchmarks="$set" "${SET_FLAGS[@]}"
        rm -rf "${DB_DIR:?}/$engine"
      done
    done
  done
fi

# Ratios against strata (or the first engine that is not a floor when strata did
# not run).
CANDIDATE=
for engine in "${ENGINE_LIST[@]}"; do
  if [[ -z $CANDIDATE && $engine != *-floor ]]; then CANDIDATE=$engine; fi
  if [[ $engine == strata ]]; then CANDIDATE=strata; fi
done
CANDIDATE=${CANDIDATE:-${ENGINE_LIST[0]}}
BASELINES=()
FLOORS=()
for engine in "${ENGINE_LIST[@]}"; do
  case $engine in
    "$CANDIDATE") ;;
    *-floor) FLOORS+=("$engine") ;;
    *) BASELINES+=("$engine") ;;
  esac
done
BASELINE_LIST=$(IFS=,; echo "${BASELINES[*]:-$CANDIDATE}")

echo
echo "results: $JSON"
"$BIN" compare --input="$JSON" --candidate="$CANDIDATE" --baseline="$BASELINE_LIST" \
  | tee "$OUT/summary.txt"
# Each adapter beside its floor: adapter ops/sec over the direct driver's (1.00 is
# free; the issue's bar is 0.95).
for floor in "${FLOORS[@]}"; do
  if [[ " ${ENGINE_LIST[*]} " == *" ${floor%-floor} "* ]]; then
    printf '\nadapter / floor: %s\n' "${floor%-floor}" | tee -a "$OUT/summary.txt"
    "$BIN" compare --input="$JSON" --candidate="${floor%-floor}" --baseline="$floor" \
      | tee -a "$OUT/summary.txt"
  fi
done
for metric in ops_per_sec write_amplification peak_rss_kb; do
  "$BIN" plot --input="$JSON" --metric="$metric" --output="$OUT/$metric.svg" \
    --title="$metric, median of $RUNS alternating runs per engine" >/dev/null
done
echo "charts: $OUT/{ops_per_sec,write_amplification,peak_rss_kb}.svg"
