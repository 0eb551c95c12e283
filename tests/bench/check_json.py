#!/usr/bin/env python3
"""Runs rpcrdma-bench briefly and checks its JSON lines: a correctness check of
the benchmark (every point measured, every field present and sane), never a
timing assertion.

usage: check_json.py RPCRDMA_BENCH OUT.jsonl [rpcrdma-bench options...]
"""
import json
import math
import os
import subprocess
import sys

REQUIRED = ("stack", "provider", "transport", "workload", "size", "depth", "conns",
            "threads", "error", "calls", "seconds", "calls_per_s", "gbytes_per_s",
            "cpu_s", "cpu_us_per_call", "cpu_ns_per_byte")


def fail(msg):
    print(f"check_json: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    binary, out = sys.argv[1], sys.argv[2]
    if os.path.exists(out):
        os.unlink(out)
    proc = subprocess.run([binary, "--json", out] + sys.argv[3:], timeout=240, check=False)
    if proc.returncode != 0:
        fail(f"rpcrdma-bench exited with {proc.returncode}")
    seen = set()
    with open(out, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    if not lines:
        fail("no results")
    for n, line in enumerate(lines, 1):
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"line {n} is not JSON: {e}")
        if r.get("note", "").startswith("n/a"):
            continue
        for key in REQUIRED:
            if key not in r:
                fail(f"line {n}: no {key}")
        if r["error"] != 0 or r["calls"] <= 0 or r["seconds"] <= 0:
            fail(f"line {n}: no successful calls: {line.strip()}")
        numbers = [r["seconds"], r["calls_per_s"], r["gbytes_per_s"], r["cpu_ns_per_byte"]]
        numbers += list(r["cpu_s"].values()) + list(r["cpu_us_per_call"].values())
        if r["workload"] == "lat":
            lat = r.get("lat_us")
            if not lat:
                fail(f"line {n}: lat without percentiles")
            order = [lat[k] for k in ("min", "p50", "p99", "p999", "max")]
            if order != sorted(order) or order[0] <= 0:
                fail(f"line {n}: percentiles out of order: {lat}")
            numbers += order
        if "repeats" in r:
            # Each turn's headline figure, in order; the reported run is
            # among them and within the spread.
            turns, lo, hi = r.get("turns"), r["spread"][0], r["spread"][1]
            ok = [t for t in turns or [] if t > 0]
            if not turns or len(ok) != r["repeats"] or not all(lo - 0.01 <= t <= hi + 0.01
                                                                for t in ok):
                fail(f"line {n}: turns do not match repeats and spread: {line.strip()}")
            numbers += turns
        if any(not math.isfinite(x) or x < 0 for x in numbers):
            fail(f"line {n}: a negative or non-finite number: {line.strip()}")
        seen.add((r["stack"], r["workload"], r["size"]))
    print(f"check_json: {len(lines)} results, {len(seen)} distinct points, all valid")


if __name__ == "__main__":
    main()
