#!/usr/bin/env bash
# Alternating runs of several (binary, engine) configurations on the reference shape,
# the order rotated each round, for questions `compare.sh` (one binary) cannot ask:
# an older build against a newer one, an option against its absence.
#
#   CONFIGS="old=/tmp/strata-old:rocksdb new=target/native/release/strata:rocksdb \
#            floor=target/native/release/strata:rocksdb:floor" OUT=results/ab \
#     scripts/compare-binaries.sh
#
# Each configuration is NAME=BINARY:ENGINE[:OPTION...], OPTION one of `floor`
# (`bench --floor`), `stats` (`--rocksdb_statistics=true`) and `nostats` (`=false`).
# Environment: RUNS=3, NUM=2000000, READS=1000000 (readrandom), SEQ_READS (readseq;
# default one pass), THREADS=1, SETS="fillseq,readseq fillrandom,readrandom".
# Results: $OUT/NAME.jsonl per configuration, $OUT/log, and a median table on stdout.
set -uo pipefail
OUT=${OUT:?set OUT}; RUNS=${RUNS:-3}; NUM=${NUM:-2000000}; READS=${READS:-1000000}
if compgen -G "$OUT/*.jsonl" >/dev/null; then
  echo "error: $OUT already holds results; use a fresh OUT" >&2; exit 1
fi
mkdir -p "$OUT/db"
FAILED=0
SHAPE=(--key_size=16 --value_size=100 --write_buffer_size=8388608 --target_file_size_base=8388608
  --max_bytes_for_level_base=33554432 --max_bytes_for_level_multiplier=10 --bloom_bits=10
  --cache_size=67108864 --compression_type=none --max_background_jobs=2 --threads="${THREADS:-1}")
read -r -a CONFIG_LIST <<< "${CONFIGS:?set CONFIGS}"
read -r -a SET_LIST <<< "${SETS:-fillseq,readseq fillrandom,readrandom}"
for set in "${SET_LIST[@]}"; do
  for ((i = 0; i < RUNS; i++)); do
    n=${#CONFIG_LIST[@]}
    for ((j = 0; j < n; j++)); do
      c=${CONFIG_LIST[$(( (i + j) % n ))]}
      name=${c%%=*}
      IFS=: read -r -a parts <<< "${c#*=}"
      if (( ${#parts[@]} < 2 )); then echo "error: '$c' is not NAME=BINARY:ENGINE[:OPTION...]" >&2; exit 1; fi
      bin=${parts[0]}; flags=(--engine="${parts[1]}")
      for o in "${parts[@]:2}"; do
        case $o in
          floor) flags+=(--floor) ;;
          nostats) flags+=(--rocksdb_statistics=false) ;;
          stats) flags+=(--rocksdb_statistics=true) ;;
          *) echo "error: unknown option '$o' in $c" >&2; exit 1 ;;
        esac
      done
      extra=(--num="$NUM")
      case ,$set, in
        *,readrandom,*) extra+=(--reads="$READS") ;;
        *,readseq,*|*,readreverse,*) if [[ -n ${SEQ_READS:-} ]]; then extra+=(--reads="$SEQ_READS"); fi ;;
      esac
      echo "== $name $set" >> "$OUT/log"
      "$bin" bench "${flags[@]}" --db="$OUT/db/$name" "${SHAPE[@]}" --benchmarks="$set" \
        "${extra[@]}" --json="$OUT/$name.jsonl" >> "$OUT/log" 2>&1 \
        || { echo "FAILED $name $set" | tee -a "$OUT/log" >&2; FAILED=1; }
      rm -rf "${OUT:?}/db/$name"
    done
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    runs = {}
    for line in open(f):
        r = json.loads(line)
        runs.setdefault(r["name"], []).append(r["ops_per_sec"])
    for bench, v in runs.items():
        name = os.path.basename(f)[:-6]
        print(f"{name:28s} {bench:12s} median {statistics.median(v):12.0f}  runs {[round(x) for x in v]}")
PY
exit $FAILED
