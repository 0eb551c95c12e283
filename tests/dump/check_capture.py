#!/usr/bin/env python3
"""dump/capture: rpcrdma-dump against tshark on a real capture.

Runs rpcrdma-dump on the Linux 6.12 NFSv3-over-RDMA capture and asks
tshark (4.0, protocol "rpcordma") for the same messages.  Every message
tshark finds must be printed exactly once, at the same frame (tshark gives a
multi-packet Send the number of its last frame, as rpcrdma-dump does), with
the same XID, version, credit, procedure and every chunk segment; nothing
else may be printed, and no message may be "invalid".  The RPC header is
checked as well where the message carries it inline.

A missing capture or a missing tshark is a failure, not a skip: the
comparison is the point of the test.
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys

import dumpjson

FIELDS = ["frame.number", "rpcordma.xid", "rpcordma.version", "rpcordma.flow_control",
          "rpcordma.msg_type", "rpcordma.reads_count", "rpcordma.writes_count",
          "rpcordma.reply_count", "rpcordma.position", "rpcordma.rdma_handle",
          "rpcordma.rdma_length", "rpcordma.rdma_offset", "rpcordma.segment_count",
          "rpc.xid", "rpc.msgtyp", "rpc.program", "rpc.programversion", "rpc.procedure",
          "rpc.replystat", "rpc.state_accept", "rpc.state_reject"]

REPLY_STAT = {0: "MSG_ACCEPTED", 1: "MSG_DENIED"}
ACCEPT_STAT = {0: "SUCCESS", 1: "PROG_UNAVAIL", 2: "PROG_MISMATCH", 3: "PROC_UNAVAIL",
               4: "GARBAGE_ARGS", 5: "SYSTEM_ERR"}
REJECT_STAT = {0: "RPC_MISMATCH", 1: "AUTH_ERROR"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ints(field):
    return [int(v, 0) for v in field.split(",")] if field else []


def tshark_rows(tshark, capture, display_filter, fields):
    cmd = [tshark, "-r", capture, "-Y", display_filter, "-T", "fields", "-E", "occurrence=a",
           "-E", "separator=/t", "-E", "aggregator=,"]
    for f in fields:
        cmd += ["-e", f]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        fail("tshark failed (status %d): %s" % (proc.returncode,
                                                 proc.stderr.decode(errors="replace")))
    rows = []
    for line in proc.stdout.decode().splitlines():
        cols = line.split("\t")
        if len(cols) != len(fields):
            fail("unexpected tshark line: %r" % line)
        rows.append(dict(zip(fields, (ints(c) for c in cols))))
    return rows


def tshark_messages(tshark, capture):
    msgs = []
    for row in tshark_rows(tshark, capture, "rpcordma", FIELDS):
        if len(row["rpcordma.xid"]) != 1:
            fail("frame %d holds %d RPC-over-RDMA messages; this test expects one per frame"
                 % (row["frame.number"][0], len(row["rpcordma.xid"])))
        msgs.append(row)
    return msgs


def tshark_deferred_rpc(tshark, capture):
    """RPC headers tshark shows only once a Read chunk has been fetched.

    For a call with a Read chunk at a non-zero position, tshark decodes the
    RPC message in the frame that completes the RDMA Reads, listing the
    Send's frame among its fragments.  Returns {Send frame: that row}.
    """
    rpc_fields = [f for f in FIELDS if f.startswith("rpc.")]
    found = {}
    for row in tshark_rows(tshark, capture, "rpcordma.fragments && rpc",
                           ["frame.number", "rpcordma.fragment"] + rpc_fields):
        for frag in row["rpcordma.fragment"]:
            found.setdefault(frag, row)
    return found


def hexint(s):
    return int(s, 16)


def compare(rec, ts, deferred):
    """List the differences between one dump record and one tshark row."""
    diffs = []

    def same(what, mine, theirs):
        if mine != theirs:
            diffs.append("%s: rpcrdma-dump %r, tshark %r" % (what, mine, theirs))

    one = {k: (v[0] if len(v) == 1 else v) for k, v in ts.items()
           if k.startswith("rpcordma.") and k in ("rpcordma.xid", "rpcordma.version",
                                                  "rpcordma.flow_control", "rpcordma.msg_type",
                                                  "rpcordma.reads_count",
                                                  "rpcordma.writes_count",
                                                  "rpcordma.reply_count")}
    if "xid" not in rec:
        diffs.append("rpcrdma-dump decoded no header: %s" % rec.get("invalid"))
        return diffs
    same("xid", hexint(rec["xid"]), one["rpcordma.xid"])
    same("vers", rec["vers"], one["rpcordma.version"])
    same("credit", rec["credit"], one["rpcordma.flow_control"])
    proc = dumpjson.PROC_NAMES.get(rec["proc"], rec["proc"])
    same("proc", proc, one["rpcordma.msg_type"])
    if "reads" not in rec:
        diffs.append("no chunk lists printed")
        return diffs
    reads, writes, reply = rec["reads"], rec["writes"], rec["reply"]
    same("Read list entries", len(reads), one.get("rpcordma.reads_count"))
    same("Write list chunks", len(writes), one.get("rpcordma.writes_count"))
    same("Reply chunk present", 0 if reply is None else 1, one.get("rpcordma.reply_count"))
    same("read positions", [r["position"] for r in reads], ts["rpcordma.position"])
    segs = [r for r in reads] + [s for c in writes for s in c] + (reply or [])
    same("segment handles", [hexint(s["handle"]) for s in segs], ts["rpcordma.rdma_handle"])
    same("segment lengths", [s["length"] for s in segs], ts["rpcordma.rdma_length"])
    same("segment offsets", [hexint(s["offset"]) for s in segs], ts["rpcordma.rdma_offset"])
    same("segments per chunk", [len(c) for c in writes] + ([] if reply is None else [len(reply)]),
         ts["rpcordma.segment_count"])

    rpc = rec.get("rpc")
    if rpc is None:
        # Only RDMA_NOMSG may leave the RPC message out: it is in a chunk.
        if rec["proc"] != "RDMA_NOMSG":
            diffs.append("no rpc object for %s" % rec["proc"])
        return diffs
    if not ts["rpc.xid"] and any(r["position"] for r in reads):
        ts = deferred.get(ts["frame.number"][0], ts)
    if not ts["rpc.xid"]:
        diffs.append("tshark found no RPC message, rpcrdma-dump did")
        return diffs
    # The first RPC layer is the one after the transport header; tshark
    # sometimes finds a second one inside NFS data.
    first = {k: (v[0] if v else None) for k, v in ts.items() if k.startswith("rpc.")}
    same("rpc xid", hexint(rpc["xid"]), first["rpc.xid"])
    same("rpc msg_type", {"CALL": 0, "REPLY": 1}[rpc["msg_type"]], first["rpc.msgtyp"])
    if rpc["msg_type"] == "CALL":
        same("rpc prog", rpc.get("prog"), first["rpc.program"])
        same("rpc vers", rpc.get("vers"), first["rpc.programversion"])
        same("rpc proc", rpc.get("proc"), first["rpc.procedure"])
    else:
        same("rpc reply_stat", rpc["reply_stat"], REPLY_STAT.get(first["rpc.replystat"]))
        if "accept_stat" in rpc:
            same("rpc accept_stat", rpc["accept_stat"], ACCEPT_STAT.get(first["rpc.state_accept"]))
        if "reject_stat" in rpc:
            same("rpc reject_stat", rpc["reject_stat"], REJECT_STAT.get(first["rpc.state_reject"]))
    return diffs


def check_against_tshark(tool, capture, tshark):
    """Run both on @capture; return (records, list of disagreements)."""
    try:
        records = dumpjson.run_dump(tool, [capture], has_frame=True)
    except dumpjson.SchemaError as e:
        fail(str(e))
    expected = tshark_messages(tshark, capture)
    if not expected:
        fail("tshark found no RPC-over-RDMA message in %s" % capture)
    deferred = tshark_deferred_rpc(tshark, capture)

    problems = []
    for rec in records:
        if "invalid" in rec:
            problems.append("frame %d: rpcrdma-dump says invalid: %s" % (rec["frame"], rec["invalid"]))
    mine = {}
    for rec in records:
        if rec["frame"] in mine:
            problems.append("frame %d: printed twice" % rec["frame"])
        mine[rec["frame"]] = rec
    theirs = {row["frame.number"][0]: row for row in expected}
    for frame in sorted(set(theirs) - set(mine)):
        problems.append("frame %d: tshark decodes a message, rpcrdma-dump prints none" % frame)
    for frame in sorted(set(mine) - set(theirs)):
        problems.append("frame %d: rpcrdma-dump prints a message tshark does not see" % frame)
    for frame in sorted(set(mine) & set(theirs)):
        for d in compare(mine[frame], theirs[frame], deferred):
            problems.append("frame %d: %s" % (frame, d))
    frames = [r["frame"] for r in records]
    if frames != sorted(frames):
        problems.append("records are not in frame order")
    return records, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tool", required=True, help="the rpcrdma-dump executable")
    ap.add_argument("--capture", required=True)
    ap.add_argument("--tshark", default="tshark")
    args = ap.parse_args()

    if not os.path.isfile(args.capture):
        fail("capture %s not found.  This test needs the shared/ directory checked out "
             "beside the repository (shared/samples/linux-6.12-nfsv3-rdma.pcap)." % args.capture)
    tshark = shutil.which(args.tshark)
    if not tshark:
        fail("tshark not found in PATH; install tshark (Wireshark 4.0) to run this test")

    records, problems = check_against_tshark(args.tool, args.capture, tshark)
    procs = collections.Counter(r["proc"] for r in records)
    print("%d messages: %s" % (len(records), ", ".join("%s %d" % kv for kv in sorted(procs.items()))))
    if problems:
        for p in problems[:50]:
            print("  " + p)
        fail("%d disagreement(s) with tshark" % len(problems))
    print("PASS: %d messages agree with tshark" % len(records))


if __name__ == "__main__":
    main()
