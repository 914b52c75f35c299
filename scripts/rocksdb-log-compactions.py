#!/usr/bin/env python3
"""Sums a RocksDB database's compactions from its own LOG, per output level.

RocksDB's text statistics round per-level bytes to 0.1 GB; the EVENT_LOG_v1 lines of
its LOG (`compaction_finished`, with `output_level` and `total_output_size`) are exact.
Usage: scripts/rocksdb-log-compactions.py DB_DIR  (the directory `strata bench
--engine=rocksdb --db=DB_DIR` wrote). Prints one line per output level: compactions
and bytes written, then the total.
"""
import json
import re
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    per_level: dict[int, list[int]] = {}
    with open(f"{sys.argv[1]}/LOG", encoding="utf-8", errors="replace") as log:
        for line in log:
            m = re.search(r"EVENT_LOG_v1 (\{.*\})", line)
            if not m:
                continue
            event = json.loads(m.group(1))
            if event.get("event") != "compaction_finished":
                continue
            entry = per_level.setdefault(event["output_level"], [0, 0])
            entry[0] += 1
            entry[1] += event["total_output_size"]
    for level in sorted(per_level):
        count, written = per_level[level]
        print(f"L{level}: {count} compactions, {written} bytes written")
    print(f"total: {sum(v[1] for v in per_level.values())} bytes written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
