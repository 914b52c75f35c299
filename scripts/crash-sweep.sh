#!/usr/bin/env bash
# Replays crash-loop cycles of one scenario of crates/strata/tests/fault_injection.rs in
# several processes at once, so that background flushes and compactions interleave
# with the faulted phase in more ways than one idle run shows (the load is the point:
# the stale-last-sequence bug of issue 9 showed in about one replay in a hundred this
# way, and almost never in a quiet run). Each process replays the operation indices
# START, START+STEP*PROCS, ... (STRATA_CRASH_K), each once, with the kill and crash
# mode the index implies; a failing replay prints its command, and its log (with the
# disk-operation trace and the path of the saved crash image) stays in $OUT.
#
# Environment:
#   SCENARIO=manifest_roll   sync_flush | compactions | manifest_roll | recovery
#   LAST=1650                last operation index (the scenario's op count; a run of
#                            the test with --nocapture prints it as "ops N")
#   STEP=1                   replay every STEP-th index
#   PROCS=4                  processes at once (more than the cores, on purpose)
#   OUT=/tmp/crash-sweep     logs
# Exit status 1 if any replay failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCENARIO=${SCENARIO:-manifest_roll}
LAST=${LAST:-1650}
STEP=${STEP:-1}
PROCS=${PROCS:-4}
OUT=${OUT:-/tmp/crash-sweep}
mkdir -p "$OUT"
cd "$ROOT"
BIN=$(cargo test -q -p strata --test fault_injection --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="fault_injection":
        print(m["executable"])')
[[ -x "$BIN" ]] || { echo "error: could not build the fault_injection test" >&2; exit 1; }
for p in $(seq 0 $((PROCS - 1))); do
  (
    for k in $(seq $((p * STEP)) $((STEP * PROCS)) "$LAST"); do
      log="$OUT/$SCENARIO-$k.log"
      if ! STRATA_CRASH_SCENARIO=$SCENARIO STRATA_CRASH_K=$k "$BIN" crash_loop >"$log" 2>&1; then
        echo "FAIL: STRATA_CRASH_SCENARIO=$SCENARIO STRATA_CRASH_K=$k (log: $log)"
      fi
    done
  ) &
done | tee "$OUT/failures.txt"
wait
replays=$(ls "$OUT"/"$SCENARIO"-*.log | wc -l)
failures=$(wc -l < "$OUT/failures.txt")
echo "$SCENARIO: $replays replays, $failures failed"
[[ $failures == 0 ]]
