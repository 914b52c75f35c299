#!/usr/bin/env bash
# Side-by-side Strata vs RocksDB, runs alternating A B A B A B: scripts/compare.sh with
# ENGINES="strata rocksdb" (see there for NUM, READS, RUNS, OUT, SKIP_BUILD, ...).
# The direct-I/O run (both engines with use_direct_reads, a block cache of 1/8 of the
# data): DIRECT=1 SETS="fillrandom,readrandom fillseq,readseq" scripts/compare-rocksdb.sh
set -euo pipefail
export ENGINES="${ENGINES:-strata rocksdb}"
exec "$(dirname "$0")/compare.sh" "$@"
