#!/usr/bin/env python3
"""Turns rpcrdma-bench's JSON lines into the results of one `make bench` run.

usage: summarize.py LINES.jsonl OUT_PREFIX
       summarize.py EARLIER.json OUT_PREFIX     (rewrite from a summary)

Writes OUT_PREFIX.json (the machine and every result), OUT_PREFIX.md (tables
of ours against raw and tirpc with their ratios, and each performance target
met or missed) and OUT_PREFIX.png (bandwidth against payload size for the
three stacks, by gnuplot; skipped with a note when gnuplot is missing).
"""
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time


def command_output(args):
    try:
        return subprocess.run(args, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return ""


def package_version(deb, pc):
    v = command_output(["dpkg-query", "-W", "-f=${Version}", deb])
    return v or command_output(["pkg-config", "--modversion", pc])


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "kernel": platform.release(),
        # The packages' versions: pkg-config's may lag behind (libtirpc).
        "libfabric": package_version("libfabric1", "libfabric"),
        "libtirpc": package_version("libtirpc3", "libtirpc"),
    }


def load(path):
    """JSON lines from rpcrdma-bench, or a summary written before (.json)."""
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return json.load(f)["results"]
    results = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                results.append(json.loads(line))
    return results


def find(results, stack, workload, size=None, depth=None, busy_poll=0):
    for r in results:
        if r["stack"] != stack or r["workload"] != workload or r.get("error"):
            continue
        if r.get("busy_poll_us", 0) != busy_poll:
            continue
        if r.get("note"):  # not applicable, or failed
            continue
        if size is not None and r["size"] != size:
            continue
        if depth is not None and r["depth"] != depth:
            continue
        return r
    return None


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def paired(a, b, key):
    """Result a against result b on their headline figure (key: the field
    that holds it, for runs without turns).  With --repeat the stacks took
    turns, so each turn's two runs met the same machine: the median of the
    per-turn ratios (turns where either run failed left out).  Otherwise
    the ratio of the reported figures."""
    if a is None or b is None:
        return None
    ta, tb = a.get("turns"), b.get("turns")
    if ta and tb and len(ta) == len(tb):
        rs = sorted(x / y for x, y in zip(ta, tb) if x and y)
        if rs:
            n = len(rs)
            return rs[n // 2] if n % 2 else (rs[n // 2 - 1] + rs[n // 2]) / 2
    return ratio(key(a), key(b))


def lat_p50(r):
    return r["lat_us"]["p50"]


def calls(r):
    return r["calls_per_s"]


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def human_size(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def cpu_call(r):
    return None if r is None else r["cpu_us_per_call"]["total"]


def lat_table(results, md):
    md.append("## Latency: NULL round trip, one call at a time (µs)\n")
    md.append("| stack | min | median | p99 | p99.9 | max | CPU µs/call (client + server) |")
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for stack in ("ours", "raw", "tirpc"):
        r = find(results, stack, "lat")
        if not r:
            continue
        lat = r["lat_us"]
        md.append(f"| {stack} | {lat['min']:.1f} | {lat['p50']:.1f} | {lat['p99']:.1f} | "
                  f"{lat['p999']:.1f} | {lat['max']:.1f} | {fmt(cpu_call(r))} |")
    busy = sorted({r["busy_poll_us"] for r in results
                   if r["workload"] == "lat" and r.get("busy_poll_us")})
    for us in busy:
        r = find(results, "ours", "lat", busy_poll=us)
        if r:
            lat = r["lat_us"]
            md.append(f"| ours, busy poll {us} µs | {lat['min']:.1f} | {lat['p50']:.1f} | "
                      f"{lat['p99']:.1f} | {lat['p999']:.1f} | {lat['max']:.1f} | "
                      f"{fmt(cpu_call(r))} |")
    ours, raw, tirpc = (find(results, s, "lat") for s in ("ours", "raw", "tirpc"))
    if ours and raw and tirpc:
        md.append("")
        md.append(f"Median ratios: ours/raw {fmt(paired(ours, raw, lat_p50))}, "
                  f"ours/tirpc {fmt(paired(ours, tirpc, lat_p50))}.")
    for us in busy:
        r = find(results, "ours", "lat", busy_poll=us)
        if r and ours:
            md.append(f"With busy polling ({us} µs, rpcrdma_loop_set_busy_poll() on both "
                      f"sides; measured after the rows above, not in turns with them): "
                      f"median {fmt(ratio(lat_p50(r), lat_p50(ours)))} of ours without, "
                      f"{fmt(ratio(lat_p50(r), lat_p50(raw)) if raw else None)} of raw.")
    md.append("")


def rate_table(results, md):
    md.append("## Call rate: NULL calls with depth calls in flight, one connection\n")
    md.append("| depth | ours calls/s | raw msgs/s | tirpc calls/s | ours/raw | ours/tirpc "
              "| CPU µs/call ours | raw | tirpc |")
    md.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    depths = sorted({r["depth"] for r in results if r["workload"] == "rate"})
    for d in depths:
        o, w, t = (find(results, s, "rate", depth=d) for s in ("ours", "raw", "tirpc"))
        val = [None if x is None else x["calls_per_s"] for x in (o, w, t)]
        md.append(f"| {d} | {fmt(val[0], 0)} | {fmt(val[1], 0)} | {fmt(val[2], 0)} | "
                  f"{fmt(paired(o, w, calls))} | {fmt(paired(o, t, calls))} | "
                  f"{fmt(cpu_call(o))} | {fmt(cpu_call(w))} | {fmt(cpu_call(t))} |")
    md.append("")


BULK_TITLES = {
    "read": "Bulk server → client (`read`: Write chunks, like NFS READ; raw = RDMA Write)",
    "write": "Bulk client → server (`write`: Read chunks, like NFS WRITE; raw = RDMA Read)",
}


def bulk_table(results, wl, md):
    md.append(f"## {BULK_TITLES[wl]}\n")
    md.append("| size | depth | ours GB/s | raw GB/s | tirpc GB/s | ours/raw | ours/tirpc "
              "| CPU ns/byte ours | raw | tirpc | ours calls/s |")
    md.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    sizes = sorted({r["size"] for r in results if r["workload"] == wl})
    for size in sizes:
        o, w, t = (find(results, s, wl, size=size) for s in ("ours", "raw", "tirpc"))
        bw = [None if x is None else x["gbytes_per_s"] for x in (o, w, t)]
        cpb = [None if x is None else x["cpu_ns_per_byte"] for x in (o, w, t)]
        depth = (o or w or t or {}).get("depth", "-")
        md.append(f"| {human_size(size)} | {depth} | {fmt(bw[0])} | {fmt(bw[1])} | {fmt(bw[2])} | "
                  f"{fmt(paired(o, w, calls))} | {fmt(paired(o, t, calls))} | "
                  f"{fmt(cpb[0], 3)} | {fmt(cpb[1], 3)} | {fmt(cpb[2], 3)} | "
                  f"{fmt(None if o is None else o['calls_per_s'], 0)} |")
    md.append("")


def nfs_table(results, md):
    md.append("## NFSv3 against the kernel's nfsd: our client and the kernel's client\n")
    md.append("Sequential WRITE (UNSTABLE, then COMMIT) and READ of the same file, in "
              "the same pieces.  One call at a time (the kernel's client through O_DIRECT "
              "dd), then our client with four calls in flight from one thread over one "
              "connection and over four (rpcrdma_client_opts.nconnect, as NFS's "
              "nconnect), with the calls each connection carried.\n")
    md.append("| client | connections | in flight | workload | piece | file | GB/s | calls/s "
              "| client CPU µs/call | calls per connection |")
    md.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in results:
        if not r["workload"].startswith("nfs-") or r.get("error"):
            continue
        cpu = r.get("cpu_us_per_call", {}).get("client")
        nc = r.get("nconnect") or 0
        # Without nconnect our bench gives each call in flight a connection
        # of its own; the kernel's client here has one.
        conns = nc or (r["depth"] if r["stack"] == "ours-nfs" else 1)
        spread = ", ".join(str(c) for c in r.get("conn_calls") or []) or "-"
        md.append(f"| {r['stack']} | {conns} | {r['depth']} | {r['workload']} | "
                  f"{human_size(r['size'])} | {human_size(r['file_size'])} | "
                  f"{r['gbytes_per_s']:.3f} | {r['calls_per_s']:.0f} | {fmt(cpu)} | {spread} |")
    for wl in ("nfs-write", "nfs-read"):
        o = next((r for r in results if r["stack"] == "ours-nfs" and r["workload"] == wl
                  and not r.get("error") and not r.get("nconnect") and r["depth"] == 1), None)
        k = find(results, "kernel-nfs", wl)
        v = ratio(o and o["gbytes_per_s"], k and k["gbytes_per_s"])
        if v is not None:
            md.append(f"\n{wl}, one call at a time: ours/kernel {v:.2f}.")
        one, four = (nconnect_row(results, wl, n) for n in (1, 4))
        v = ratio(four and four["gbytes_per_s"], one and one["gbytes_per_s"])
        if v is not None:
            md.append(f"\n{wl}, four calls in flight: nconnect 4 / nconnect 1 {v:.2f}.")
    md.append("")


def nconnect_row(results, workload, n):
    return next((r for r in results if r["stack"] == "ours-nfs" and r["workload"] == workload
                 and not r.get("error") and r.get("nconnect") == n), None)


def nfsd_table(results, md):
    rows = [r for r in results if r["stack"] == "kernel-nfs"
            and r["workload"].startswith("nfsd-") and not r.get("error")]
    devs = next((r for r in results if r["workload"] == "nfsd-devices"), None)
    md.append("## The kernel's NFS client against rpcrdma-nfsd (verbs, no --addr)\n")
    md.append("One server for every RDMA device; the kernel's client mounts it through "
              "each device's address in turn and moves a 64 MiB file with O_DIRECT dd, "
              "one call at a time."
              + (f" The server says it opened {devs['devices']} device(s)." if devs else "")
              + "\n")
    md.append("| device | address | workload | piece | GB/s | calls/s |")
    md.append("| --- | --- | --- | ---: | ---: | ---: |")
    for r in rows:
        md.append(f"| {r['device']} | {r['address']} | {r['workload']} | "
                  f"{human_size(r['size'])} | {r['gbytes_per_s']:.3f} | "
                  f"{r['calls_per_s']:.0f} |")
    md.append("")


def scale_table(results, md):
    md.append("## Scaling: NULL calls/s against client connections and server workers\n")
    points = [r for r in results if r["workload"] == "scale"]
    workers = sorted({r["workers"] for r in points})
    depth = points[0]["depth"]
    md.append(f"One client thread, {depth} calls in flight per connection (opts.nconnect, "
              "clients of at most 16 connections); the server's worker loops "
              "(rpcrdma_server_opts.workers).\n")
    md.append("| connections | " + " | ".join(f"{w} worker(s)" for w in workers) + " |")
    md.append("| ---: | " + " | ".join("---:" for _ in workers) + " |")
    for c in sorted({r["conns"] for r in points}):
        row = []
        for w in workers:
            r = next((r for r in points if r["conns"] == c and r["workers"] == w), None)
            row.append("-" if r is None or r.get("error") else fmt(r["calls_per_s"], 0))
        md.append(f"| {c} | " + " | ".join(row) + " |")
    md.append("")


# Provider operations per RPC: the order of the tables, and the minimum each
# message form needs (bench/README.md, "Work per RPC", argues each figure).
OPS = ("sends", "recvs", "reads", "writes", "grants", "revokes", "regs")
OP_ABBR = ("S", "R", "Rd", "Wr", "G", "V", "reg")
# Measured per-call figures carry the few calls the measurement itself makes
# around the interval; any form's minimum is a whole number.
OPS_TOLERANCE = 0.02


def work(r, side):
    w = r.get("work_per_call") or {}
    return w.get(side)


def message_form(r):
    """The form of the calls of an `ours` result, from the client's counters:
    (name, chunks granted, chunks the server RDMA Reads, chunks it Writes)."""
    c = work(r, "client")
    if not c or "sends" not in c:
        return None

    def has(name):
        return c.get(name, 0) >= 0.5

    parts, grants, reads, writes = [], 0, 0, 0
    if has("long_calls"):
        parts.append("Long Call")
        grants, reads = grants + 1, reads + 1
    elif has("read_chunk_msgs"):
        parts.append("Read chunk")
        grants, reads = grants + 1, reads + 1
    if has("write_chunk_msgs"):
        parts.append("Write chunk")
        grants, writes = grants + 1, writes + 1
    if has("long_replies"):
        parts.append("Long Reply")
        grants, writes = grants + 1, writes + 1
    elif has("reply_chunk_msgs"):
        parts.append("Reply chunk offered, reply inline")
        grants += 1
    return (" + ".join(parts) or "inline", grants, reads, writes)


def minimum(form, provider):
    """The fewest operations per RPC on each side (bench/README.md).  With
    Send With Invalidate (verbs) the responder invalidates one of the call's
    handles; every other one, and all of them on ofi, the requester revokes."""
    _, grants, reads, writes = form
    remote_inv = 1 if provider == "verbs" and grants else 0
    client = {"sends": 1, "recvs": 1, "reads": 0, "writes": 0, "grants": grants,
              "revokes": grants - remote_inv, "regs": 0}
    server = {"sends": 1, "recvs": 1, "reads": reads, "writes": writes, "grants": 0,
              "revokes": 0, "regs": 0}
    return {"client": client, "server": server}


def excess(r):
    """Operations per RPC above the minimum, both sides (None: not measured)."""
    form = message_form(r)
    if form is None or not work(r, "server"):
        return None, None
    mins = minimum(form, r["provider"])
    over = 0.0
    for side in ("client", "server"):
        w = work(r, side)
        for op in OPS:
            over += max(0.0, w.get(op, 0) - mins[side][op])
    return form, over


def fmt_ops(w, mins=None):
    if not w or "sends" not in w:
        return "-"
    out = []
    for op, abbr in zip(OPS, OP_ABBR):
        v = w.get(op, 0)
        if v < 0.005 and (mins is None or not mins[op]):
            continue
        out.append(f"{abbr} {v:.2f}")
    return " ".join(out) or "0"


def fmt_min(m):
    return " ".join(f"{abbr} {m[op]}" for op, abbr in zip(OPS, OP_ABBR) if m[op]) or "0"


def fmt_sys(w):
    return "n/a" if not w or w.get("syscalls") is None else f"{w['syscalls']:.1f}"


def work_table(results, md):
    rows = [r for r in results if r["stack"] == "ours" and not r.get("error")
            and not r.get("note") and work(r, "client")]
    if not rows:
        return
    md.append("## Work per RPC: provider operations and system calls (ours)\n")
    md.append("Per call over the measured interval, each side, next to the minimum of the "
              "call's message form (bench/README.md, \"Work per RPC\"). S Sends, R receives, "
              "Rd RDMA Reads, Wr RDMA Writes, G grants (windows bound or keys), V revokes "
              "(invalidations), reg registrations.\n")
    md.append("| workload | size | depth | form | client | server | minimum client | "
              "minimum server | syscalls client | server | |")
    md.append("| --- | ---: | ---: | --- | --- | --- | --- | --- | ---: | ---: | --- |")
    for r in rows:
        form, over = excess(r)
        if form is None:
            continue
        mins = minimum(form, r["provider"])
        state = "at minimum" if over <= OPS_TOLERANCE else f"+{over:.2f} ops"
        md.append(f"| {r['workload']} | {human_size(r['size'])} | {r['depth']} | {form[0]} | "
                  f"{fmt_ops(work(r, 'client'), mins['client'])} | "
                  f"{fmt_ops(work(r, 'server'), mins['server'])} | {fmt_min(mins['client'])} | "
                  f"{fmt_min(mins['server'])} | {fmt_sys(work(r, 'client'))} | "
                  f"{fmt_sys(work(r, 'server'))} | {state} |")
    why = next((w.get("syscalls_na") for r in rows for w in (work(r, "client"), work(r, "server"))
                if w and w.get("syscalls_na")), None)
    if why:
        md.append(f"\nSystem calls n/a: {why}.")
    others = [r for r in results if r["stack"] in ("raw", "tirpc") and not r.get("error")
              and not r.get("note") and fmt_sys(work(r, "client")) != "n/a"]
    if others:
        md.append("\nSystem calls per call of the baselines, same points (client / server): "
                  + "; ".join(f"{r['stack']} {r['workload']} {human_size(r['size'])} "
                              f"d{r['depth']} {fmt_sys(work(r, 'client'))} / "
                              f"{fmt_sys(work(r, 'server'))}" for r in others) + ".")
    md.append("")


def work_targets(results, add):
    forms = {}
    for r in results:
        if r["stack"] != "ours" or r.get("error") or r.get("note"):
            continue
        form, over = excess(r)
        if form is None:
            continue
        worst = forms.get(form[0])
        forms[form[0]] = over if worst is None else max(worst, over)
    for name, over in sorted(forms.items()):
        add(f"provider operations per RPC above the minimum, {name} (worst point)", over,
            "= 0", over <= OPS_TOLERANCE)


def targets(results):
    """Each target of the benchmark (figures, not test assertions)."""
    out = []

    ours = [r for r in results if r["stack"] == "ours"]
    lab = bool(ours) and ours[0]["provider"] != "ofi"

    def add(name, value, goal, met, digits=3, reference=False):
        out.append({"target": name, "value": value, "goal": goal, "digits": digits,
                    "met": None if value is None else met, "reference": reference})

    o, w = find(results, "ours", "lat"), find(results, "raw", "lat")
    v = paired(o, w, lat_p50)
    add("NULL round trip median, ours/raw", v, "<= 1.15", v is not None and v <= 1.15)
    for wl, what in (("read", "Write chunk vs raw RDMA Write"),
                     ("write", "Read chunk vs raw RDMA Read")):
        for size in (1 << 20, 4 << 20):
            o, w = find(results, "ours", wl, size=size), find(results, "raw", wl, size=size)
            v = paired(o, w, calls)
            add(f"{wl} {human_size(size)} bandwidth, {what}", v, ">= 0.90",
                v is not None and v >= 0.9)
    o, w = find(results, "ours", "rate", depth=32), find(results, "raw", "rate", depth=32)
    v = paired(o, w, calls)
    add("call rate at depth 32, ours/raw message rate", v, ">= 0.80", v is not None and v >= 0.8)
    t = find(results, "tirpc", "rate", depth=32)
    v = paired(o, t, calls)
    add("call rate at depth 32, ours/tirpc", v, "> 1.00", v is not None and v > 1.0)
    for wl in ("read", "write"):
        o, t = find(results, "ours", wl, size=1 << 20), find(results, "tirpc", wl, size=1 << 20)
        v = paired(o, t, calls)
        add(f"{wl} 1 MiB bandwidth, ours/tirpc", v, ">= 1.50", v is not None and v >= 1.5)
        v = ratio(o and o["cpu_ns_per_byte"], t and t["cpu_ns_per_byte"])
        add(f"{wl} 1 MiB CPU per byte, ours/tirpc", v, "< 1.00", v is not None and v < 1.0)
    # Issue 18: small I/O and work per RPC.  Its ratios are set for ofi
    # loopback; in the lab (rxe under an emulated CPU, against the guest's
    # kernel TCP for tirpc) they are shown for reference only.
    o, w = find(results, "ours", "rate", depth=32), find(results, "raw", "rate", depth=32)
    v = paired(o, w, calls)
    add("call rate at depth 32, ours/raw (issue 18)", v, ">= 0.90", v is not None and v >= 0.9,
        reference=lab)
    for wl in ("read", "write"):
        for size in sorted({r["size"] for r in results if r["workload"] == wl}):
            o, w, t = (find(results, s, wl, size=size) for s in ("ours", "raw", "tirpc"))
            if size >= 64 << 10:
                v = paired(o, w, calls)
                add(f"{wl} {human_size(size)} bandwidth, ours/raw (issue 18)", v, ">= 0.90",
                    v is not None and v >= 0.9, reference=lab)
            v = paired(o, t, calls)
            add(f"{wl} {human_size(size)} bandwidth, ours/tirpc (issue 18)", v, ">= 1.00",
                v is not None and v >= 1.0, reference=lab)
    work_targets(results, add)
    if lab:
        lab_targets(results, add)
    return out


def lab_targets(results, add):
    """Issue 18's lab targets: rpcrdma-nfsd with no --addr serves the kernel's
    client through both rxe devices; our client's nconnect=4 against the
    kernel's nfsd spreads its calls over four connections."""
    done = {}
    for r in results:
        if r["stack"] == "kernel-nfs" and r["workload"].startswith("nfsd-") \
                and not r.get("error"):
            done.setdefault(r["device"], set()).add(r["workload"])
    both = sum(1 for wls in done.values() if {"nfsd-write", "nfsd-read"} <= wls)
    devs = next((r["devices"] for r in results if r["workload"] == "nfsd-devices"), None)
    add("rpcrdma-nfsd with no --addr: devices the kernel's client wrote and read through "
        "(issue 18)", both if devs is not None or done else None, "2 (rxe0, rxe1)",
        both == 2 and devs == 2, digits=0)
    spread = []
    for wl in ("nfs-write", "nfs-read"):
        r = nconnect_row(results, wl, 4)
        spread.append(None if r is None else sum(1 for c in r.get("conn_calls", []) if c > 0))
    v = None if None in spread else min(spread)
    add("our NFSv3 client, nconnect=4, against the kernel's nfsd: connections that carried "
        "calls, WRITE and READ (issue 18)", v, "4 of 4", v == 4, digits=0)


def plot(results, prefix, md, provider):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        md.append("(No plot: gnuplot is not installed.)\n")
        return None
    series = [("ours", "read"), ("raw", "read"), ("tirpc", "read"),
              ("ours", "write"), ("raw", "write"), ("tirpc", "write")]
    sizes = sorted({r["size"] for r in results if r["workload"] in ("read", "write")})
    if not sizes:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as dat:
        for size in sizes:
            row = [str(size / 1024)]
            for stack, wl in series:
                r = find(results, stack, wl, size=size)
                row.append("NaN" if r is None else f"{r['gbytes_per_s']:.4f}")
            dat.write(" ".join(row) + "\n")
        data = dat.name
    png = prefix + ".png"
    titles = {"read": "server to client (read: Write chunks / raw RDMA Write)",
              "write": "client to server (write: Read chunks / raw RDMA Read)"}
    script = [
        "set terminal png size 1200,480 font ',10'",
        f"set output '{png}'",
        "set multiplot layout 1,2 title 'rpcrdma-bench: bandwidth against payload size "
        f"({'loopback, ofi' if provider == 'ofi' else provider + ', Soft-RoCE'}, depth 8)'",
        "set logscale x 2", "set xlabel 'payload (KiB)'", "set ylabel 'GB/s'",
        "set yrange [0:*]", "set key top left", "set grid",
    ]
    for half, wl in enumerate(("read", "write")):
        if not any(r["workload"] == wl and not r.get("note") for r in results):
            continue
        script.append(f"set title '{titles[wl]}'")
        cols = [(3 * half + i + 2, series[3 * half + i][0]) for i in range(3)]
        script.append("plot " + ", ".join(
            f"'{data}' using 1:{c} with linespoints lw 2 title '{name}'" for c, name in cols))
    script.append("unset multiplot")
    try:
        done = subprocess.run([gnuplot], input="\n".join(script) + "\n", text=True,
                              capture_output=True, check=False)
    finally:
        os.unlink(data)
    if done.returncode:
        md.append(f"(No plot: gnuplot failed: {done.stderr.strip()[-200:]})\n")
        return None
    md.append(f"![bandwidth against size]({os.path.basename(png)})\n")
    return png


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    results = load(sys.argv[1])
    prefix = sys.argv[2]
    guest_file = os.path.join(os.path.dirname(sys.argv[1]), "guest.json")
    doc = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "results": results,
        "targets": targets(results),
    }
    if os.path.exists(guest_file):  # make bench-lab: where it really ran
        with open(guest_file, encoding="utf-8") as f:
            doc["guest"] = json.load(f)
    m = doc["machine"]
    ours = [r for r in results if r["stack"] == "ours"]
    provider = ours[0]["provider"] if ours else "ofi"
    where = (f"Loopback (127.0.0.1), provider ofi (libfabric {m['libfabric']} tcp)"
             if provider == "ofi" else
             f"Provider {provider}: Soft-RoCE (rxe) in the lab's qemu guest, rxe0 to rxe1"
             + (f" (guest: Linux {doc['guest']['kernel']}, {doc['guest']['nproc']} vCPUs "
                f"({doc['guest']['cpu_model']}) under {doc['guest']['accel']}; host below)"
                if "guest" in doc else " (the guest runs on TCG; host below)"))
    md = [f"# rpcrdma-bench: {doc['date']}\n",
          f"{where}, libtirpc "
          f"{m['libtirpc']}; {m['nproc']} CPUs ({m['cpu_model']}), Linux {m['kernel']}. "
          "Servers and clients share the machine; ratios compare points measured "
          "minutes apart at most: where each point was run several times, the stacks "
          "taking turns, a ratio is the median of the per-turn ratios (the figures "
          "shown are each stack's median run). See bench/README.md for how to read "
          "these numbers.\n"]
    lat_table(results, md)
    rate_table(results, md)
    for wl in ("read", "write"):
        if any(r["workload"] == wl for r in results):
            bulk_table(results, wl, md)
    if any(r["workload"].startswith("nfs-") for r in results):
        nfs_table(results, md)
    if any(r["workload"].startswith("nfsd-") for r in results):
        nfsd_table(results, md)
    if any(r["workload"] == "scale" for r in results):
        scale_table(results, md)
    work_table(results, md)
    plot(results, prefix, md, provider)
    md.append("## Targets (benchmark figures, not test assertions)\n")
    md.append("| target | goal | measured | |")
    md.append("| --- | --- | ---: | --- |")
    for t in doc["targets"]:
        state = "no data" if t["met"] is None else "met" if t["met"] else "MISSED"
        if t.get("reference") and t["met"] is not None:
            state = "reference: " + ("at or above" if t["met"] else "below")
        md.append(f"| {t['target']} | {t['goal']} | {fmt(t['value'], t.get('digits', 3))} "
                  f"| {state} |")
    if any(t.get("reference") for t in doc["targets"]):
        md.append("\nRows marked reference: issue 18 sets these ratios for ofi loopback "
                  "(`make bench`); here Soft-RoCE runs under an emulated CPU and tirpc over "
                  "the guest's kernel TCP, so they are shown, not judged.")
    md.append("")
    with open(prefix + ".json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(prefix + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
