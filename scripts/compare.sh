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
# the first engine's, without strata), P99, W-Amp and peak RSS.
#
# Environment:
#   ENGINES="strata rocksdb"   engines to alternate, in this order (strata, rocksdb, fjall)
#   NUM=5000000     keys (use e.g. NUM=200000 for a quick run)
#   READS=500000    reads of readrandom (capped at NUM)
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
NUM=${NUM:-5000000}
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
    rocksdb) FEATURES+=(rocksdb); NEED_ROCKSDB=1 ;;
    fjall) FEATURES+=(fjall) ;;
    *) echo "error: unknown engine '$engine' in ENGINES (strata, rocksdb, fjall)" >&2; exit 1 ;;
  esac
done
FEATURE_LIST=$(IFS=,; echo "${FEATURES[*]:-}")

# librocksdb-sys always runs bindgen at build time, which loads libclang.
have_libclang() {
  [[ -n "${LIBCLANG_PATH:-}" ]] && return 0
  compgen -G "/usr/lib/llvm-*/lib/libclang*.so*" >/dev/null ||
    compgen -G "/usr/lib/*/libclang*.so*" >/dev/null
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
  --num="$NUM" --key_size=16 --value_size="$VALUE_SIZE"
  --write_buffer_size=8388608 --target_file_size_base=8388608
  --max_bytes_for_level_base=33554432 --max_bytes_for_level_multiplier=10
  --bloom_bits=10 "--cache_size=$CACHE_SIZE" --compression_type=none
  --max_background_jobs=2 --threads="$THREADS"
)

TIME=()
if [[ -x /usr/bin/time ]]; then TIME=(/usr/bin/time -v); fi

run_one() { # engine, benchmarks, extra flags...
  local engine=$1 benchmarks=$2; shift 2
  local db=$DB_DIR/$engine
  echo "== $engine $benchmarks $*" | tee -a "$LOG"
  "${TIME[@]}" "$BIN" bench --engine="$engine" --db="$db" --benchmarks="$benchmarks" \
    "${SHAPE[@]}" "${EXTRA_FLAGS[@]}" "$@" --json="$JSON" 2>&1 \
    | grep -v '^\s*\(Command being timed\|User time\|System time\|Percent of CPU\|Elapsed\|Average\|Major\|Minor\|Voluntary\|Involuntary\|Swaps\|File system\|Socket\|Signals\|Page size\|Exit status\)' \
    | tee -a "$LOG"
  rm -rf "$db"
}

for set in "${SET_LIST[@]}"; do
  SET_FLAGS=()
  case ,$set, in *,readrandom,*|*,seekrandom,*|*,readwhilewriting,*) SET_FLAGS+=(--reads="$READS") ;; esac
  case ,$set, in *,seekrandom,*) SET_FLAGS+=(--seek_nexts=10) ;; esac
  for ((i = 1; i <= RUNS; i++)); do
    for engine in "${ENGINE_LIST[@]}"; do
      run_one "$engine" "$set" "${SET_FLAGS[@]}"
    done
  done
done

# Ratios against strata (or the first engine when strata did not run).
CANDIDATE=${ENGINE_LIST[0]}
for engine in "${ENGINE_LIST[@]}"; do
  if [[ $engine == strata ]]; then CANDIDATE=strata; fi
done
BASELINES=()
for engine in "${ENGINE_LIST[@]}"; do
  if [[ $engine != "$CANDIDATE" ]]; then BASELINES+=("$engine"); fi
done
BASELINE_LIST=$(IFS=,; echo "${BASELINES[*]:-$CANDIDATE}")

echo
echo "results: $JSON"
"$BIN" compare --input="$JSON" --candidate="$CANDIDATE" --baseline="$BASELINE_LIST" \
  | tee "$OUT/summary.txt"
