#!/usr/bin/env python3
"""Sums a RocksDB database's compactions from its own LOG, per output level.

RocksDB's text statistics round per-level bytes to 0.1 GB; the EVENT_LOG_v1 lines of
its LOG (`compaction_finished`, with `output_level` and `total_output_size`) are exact.
Usage: scripts/rocksdb-log-compactions.py DB_DIR  (the directory `strata bench
--engine=rocksdb --db=DB_DIR` wrote). Prints one line per output level: compactions
and bytes written, then the total, then the bytes of the tables flushes created
(`table_file_creation` of a job that logged `flush_started`): the rules the RocksDB
adapter's `rocks_stats::parse_event_log` follows, to check against the tickers of a
run with `--rocksdb_statistics`.
"""
import json
import re
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    per_level: dict[int, list[int]] = {}
    flush_jobs: set[int] = set()
    flushed = 0
    with open(f"{sys.argv[1]}/LOG", encoding="utf-8", errors="replace") as log:
        for line in log:
            m = re.search(r"EVENT_LOG_v1 (\{.*\})", line)
            if not m:
                continue
            event = json.loads(m.group(1))
            if event.get("event") == "flush_started":
                flush_jobs.add(event.get("job"))
            elif event.get("event") == "table_file_creation" and event.get("job") in flush_jobs:
                flushed += event.get("file_size", 0)
            if event.get("event") != "compaction_finished":
                continue
            entry = per_level.setdefault(event["output_level"], [0, 0])
            entry[0] += 1
            entry[1] += event["total_output_size"]
    for level in sorted(per_level):
        count, written = per_level[level]
        print(f"L{level}: {count} compactions, {written} bytes written")
    print(f"total: {sum(v[1] for v in per_level.values())} bytes written")
    print(f"flushes: {flushed} bytes written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
