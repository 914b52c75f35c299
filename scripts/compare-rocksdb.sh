#!/usr/bin/env bash
# Side-by-side Strata vs RocksDB, runs alternating A B A B A B: scripts/compare.sh with
# ENGINES="strata rocksdb" (see there for NUM, READS, RUNS, OUT, SKIP_BUILD, ...).
set -euo pipefail
export ENGINES="${ENGINES:-strata rocksdb}"
exec "$(dirname "$0")/compare.sh" "$@"
