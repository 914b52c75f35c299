#!/usr/bin/env bash
# Calibration of the disk and of the device models (docs/devices.md):
#   1. fio (Debian package, installed if missing) on DIR, with the parameters of
#      `strata device-bench`: direct=1, psync, one thread per outstanding I/O;
#   2. `strata device-bench` on the same DIR: the real disk, then each preset over it
#      (O_DIRECT), and each preset over the page cache (`--buffered`: the model alone);
#   3. a markdown report: strata beside fio for the real disk, each model beside the
#      figures of its preset (target: within 15%).
#
# Usage: scripts/device-bench.sh [DIR] [SIZE_BYTES] [SECONDS_PER_LINE] [REPORT.md]
# DIR must accept O_DIRECT (not tmpfs before Linux 6.6). Defaults: /work/devbench-tmp,
# 1 GiB, 5 s, results/device-bench/report.md. Raw results go beside the report.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-/work/devbench-tmp}
SIZE=${2:-1073741824}
SECS=${3:-5}
REPORT=${4:-results/device-bench/report.md}
PRESETS=${PRESETS:-"nvme sata-ssd gp3 hdd"}
OUT=$(dirname "$REPORT")
mkdir -p "$DIR" "$OUT"

if ! command -v fio >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y fio; else sudo apt-get install -y fio; fi
fi

TARGET=${CARGO_TARGET_DIR:-target}
nice -n 19 cargo build --release -p strata-cli
STRATA=$TARGET/release/strata

# The lines, as fio arguments; names match strata's.
FIO_FILE=$DIR/fio-device-bench.dat
declare -A FIO_ARGS=(
    [seqwrite-1m]="--rw=write --bs=1M --numjobs=1 --fallocate=none --end_fsync=1"
    [randread-4k-qd1]="--rw=randread --bs=4k --numjobs=1 --time_based --runtime=$SECS"
    [randread-4k-qd16]="--rw=randread --bs=4k --numjobs=16 --time_based --runtime=$SECS"
    [randread-16k-qd1]="--rw=randread --bs=16k --numjobs=1 --time_based --runtime=$SECS"
    [randread-16k-qd16]="--rw=randread --bs=16k --numjobs=16 --time_based --runtime=$SECS"
    [seqread-1m]="--rw=read --bs=1M --numjobs=1 --time_based --runtime=$SECS"
)
LINES="seqwrite-1m randread-4k-qd1 randread-4k-qd16 randread-16k-qd1 randread-16k-qd16 seqread-1m"

# fio writes a new file as strata does (no preallocation: extending direct writes).
rm -f "$FIO_FILE"
for line in $LINES; do
    echo "fio $line" >&2
    # shellcheck disable=SC2086 # word splitting of the argument list is intended
    # --refill_buffers: fresh random data per write, as strata writes (the virtual disk
    # reads repetitive data back faster).
    fio --name="$line" --filename="$FIO_FILE" --size="$SIZE" --direct=1 --ioengine=psync \
        --refill_buffers --thread --group_reporting --lat_percentiles=1 --output-format=json \
        ${FIO_ARGS[$line]} >"$OUT/fio-$line.json"
done
rm -f "$FIO_FILE"

JSONL=$OUT/strata.jsonl
rm -f "$JSONL"
"$STRATA" device-bench --path="$DIR" --size="$SIZE" --duration="$SECS" --json="$JSONL"
for p in $PRESETS; do
    for io in "" --buffered; do
        # shellcheck disable=SC2086 # an empty $io is no argument
        "$STRATA" device-bench --path="$DIR" --size="$SIZE" --duration="$SECS" --json="$JSONL" \
            --device="$p" $io
    done
done

python3 - "$OUT" "$JSONL" "$REPORT" "$LINES" "$DIR" "$PRESETS" <<'EOF'
import json, sys
out, jsonl, report, lines, d, presets = sys.argv[1:7]
lines, presets = lines.split(), presets.split()
rows = [json.loads(l) for l in open(jsonl) if l.strip()]
by = {(r["device"], r.get("io", "direct"), r["name"]): r for r in rows}
def fio(line):
    job = json.load(open(f"{out}/fio-{line}.json"))["jobs"][0]
    io = job["write"] if line.startswith("seqwrite") else job["read"]
    lat = io["lat_ns"]
    pct = lat.get("percentile", {})
    return dict(iops=io["iops"], mib=io["bw_bytes"] / 2**20, mean=lat["mean"] / 1e3,
                p50=pct.get("50.000000", 0) / 1e3, p99=pct.get("99.000000", 0) / 1e3)
rev = rows[0]["git_revision"][:10] if rows else "unknown"
w = open(report, "w")
w.write(f"Directory `{d}`, revision `{rev}`, {rows[0]['machine']['nproc'] if rows else '?'} CPUs.\n\n")
w.write("### Real disk: `strata device-bench` beside fio\n\n")
w.write("| line | strata IOPS | fio IOPS | strata/fio | strata MiB/s | fio MiB/s | strata mean / p50 / p99 µs | fio mean / p50 / p99 µs |\n")
w.write("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
for line in lines:
    s, f = by[("real", "direct", line)], fio(line)
    w.write(f"| {line} | {s['iops']:.0f} | {f['iops']:.0f} | {s['iops'] / f['iops']:.2f} | "
            f"{s['mib_per_sec']:.1f} | {f['mib']:.1f} | "
            f"{s['mean_us']:.0f} / {s['p50_us']:.0f} / {s['p99_us']:.0f} | "
            f"{f['mean']:.0f} / {f['p50']:.0f} / {f['p99']:.0f} |\n")
titles = {"direct": "Models over the real disk (O_DIRECT)",
          "buffered": "Models over the page cache (`--buffered`): the model without this disk under it"}
for io in ("direct", "buffered"):
    w.write(f"\n### {titles[io]}\n\n")
    w.write("Each cell: the figure the line checks (median µs at QD1, IOPS at QD16, MiB/s sequential), "
            "target → measured (deviation); ✓ within 15%. Mean µs in brackets on QD1 lines.\n\n")
    w.write("| line | " + " | ".join(presets) + " |\n| --- |" + " --- |" * len(presets) + "\n")
    for line in lines:
        cells = []
        for p in presets:
            r = by.get((p, io, line))
            if r is None:
                cells.append("")
                continue
            dev = r["deviation_pct"]
            ok = "✓" if abs(dev) <= 15 else "✗"
            metric = r["target_metric"]
            unit = {"p50_us": "µs", "iops": "IOPS", "mib_per_sec": "MiB/s"}[metric]
            mean = f" [{r['mean_us']:.0f}]" if metric == "p50_us" else ""
            cells.append(f"{r['target']:.0f} → {r[metric]:.0f}{mean} {unit} ({dev:+.1f}%) {ok}")
        w.write(f"| {line} | " + " | ".join(cells) + " |\n")
w.close()
print(open(report).read())
EOF
