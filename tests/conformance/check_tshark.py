#!/usr/bin/env python3
"""Hold Wireshark's RPC-over-RDMA dissector against our encoder.

gen_roce_pcap encodes messages with librpcrdma and writes them as RoCEv2
frames plus a JSON manifest of what each one says.  This script reads the
capture back with tshark, an implementation that shares no code with ours,
and compares every rpcordma field of every message with the manifest: the
fixed words, each Read segment's position and segment, each Write chunk's
and the Reply chunk's segments, the RDMA_ERROR fields, and the RPC header
tshark finds behind an RDMA_MSG.  It also checks the RoCE framing (opcode,
PSN, QP of every packet), that a message spread over several SENDs is only
dissected once reassembled, and that no frame is malformed or carries an
error-level expert item.  Any difference fails the run with the frame and
field named.

tshark missing is a failure, not a skip: a conformance test that quietly
passes without its reference proves nothing.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Wireshark 4.0 field names (tshark -G fields | grep rpcordma).
RPCORDMA_FIELDS = [
    "rpcordma.xid",
    "rpcordma.version",
    "rpcordma.flow_control",
    "rpcordma.msg_type",
    "rpcordma.reads_count",
    "rpcordma.writes_count",
    "rpcordma.reply_count",
    "rpcordma.position",
    "rpcordma.rdma_handle",
    "rpcordma.rdma_length",
    "rpcordma.rdma_offset",
    "rpcordma.segment_count",
    "rpcordma.rdma_align",
    "rpcordma.rdma_thresh",
    "rpcordma.errcode",
    "rpcordma.vers_low",
    "rpcordma.vers_high",
]
RPC_FIELDS = [
    "rpc.xid",
    "rpc.msgtyp",
    "rpc.version",
    "rpc.program",
    "rpc.programversion",
    "rpc.procedure",
    "rpc.auth.flavor",
    "rpc.auth.length",
    "rpc.auth.stamp",
    "rpc.auth.machinename",
    "rpc.auth.uid",
    "rpc.auth.gid",
    "rpc.replystat",
    "rpc.state_accept",
    "rpc.state_reject",
    "rpc.state_auth",
    "rpc.version.min",
    "rpc.version.max",
    "rpc.programversion.min",
    "rpc.programversion.max",
]
# tshark fills these in for a reply from the call it pairs it with; the
# reply itself does not carry them.
RPC_INFERRED = {"rpc.program", "rpc.programversion", "rpc.procedure"}
FIELDS = (
    ["frame.number", "infiniband.bth.opcode", "infiniband.bth.psn",
     "infiniband.bth.destqp", "infiniband.bth.padcnt"]
    + RPCORDMA_FIELDS
    + RPC_FIELDS
    + ["rpcordma.fragment", "_ws.malformed", "_ws.expert.severity",
       "_ws.expert.message"]
)

RDMA_MSG, RDMA_NOMSG, RDMA_MSGP, RDMA_DONE, RDMA_ERROR = range(5)
ERR_VERS = 1
PI_ERROR = 0x00800000  # epan/proto.h expert severity


class Mismatch(Exception):
    pass


def run_tshark(tshark, pcap):
    cmd = [tshark, "-n", "-r", pcap, "-T", "fields", "-E", "header=n",
           "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        cmd += ["-e", f]
    # An empty configuration directory: the result must not depend on
    # whoever runs the test having changed a preference or a protocol.
    with tempfile.TemporaryDirectory() as conf:
        env = dict(os.environ, WIRESHARK_CONFIG_DIR=conf, HOME=conf)
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit("tshark failed (exit %d):\n%s" % (res.returncode, res.stderr))
    frames = {}
    for line in res.stdout.splitlines():
        cols = line.split("\t")
        if len(cols) != len(FIELDS):
            raise SystemExit("unexpected tshark output line: %r" % line)
        row = {}
        for name, val in zip(FIELDS, cols):
            row[name] = val.split(",") if val != "" else []
        frames[int(row["frame.number"][0])] = row
    return frames


def ints(vals):
    return [int(v, 0) for v in vals]


def expect_field(errors, frame, label, row, field, want):
    """Compare one field's every occurrence with the list @want."""
    try:
        got = ints(row[field])
    except ValueError:
        errors.append("frame %d (%s): %s: non-numeric %r"
                      % (frame, label, field, row[field]))
        return
    if got != want:
        errors.append("frame %d (%s): %s: tshark reads %s, we encoded %s"
                      % (frame, label, field, fmt(got), fmt(want)))


def fmt(vals):
    return "[" + ", ".join("0x%x" % v if v > 9 else str(v) for v in vals) + "]"


def expected_rpcordma(msg):
    """The rpcordma field values tshark should show for @msg, field by field."""
    want = {f: [] for f in RPCORDMA_FIELDS}
    want["rpcordma.xid"] = [msg["xid"]]
    want["rpcordma.version"] = [msg["vers"]]
    want["rpcordma.flow_control"] = [msg["credit"]]
    want["rpcordma.msg_type"] = [msg["proc"]]
    proc = msg["proc"]
    if proc in (RDMA_MSG, RDMA_NOMSG, RDMA_MSGP):
        if proc == RDMA_MSGP:
            want["rpcordma.rdma_align"] = [msg["align"]]
            want["rpcordma.rdma_thresh"] = [msg["thresh"]]
        reads, writes, reply = msg["reads"], msg["writes"], msg["reply"]
        # tshark counts Read list entries (segments), Write list chunks,
        # and the Reply chunk as 0 or 1.
        want["rpcordma.reads_count"] = [len(reads)]
        want["rpcordma.writes_count"] = [len(writes)]
        want["rpcordma.reply_count"] = [1 if reply is not None else 0]
        want["rpcordma.position"] = [r["position"] for r in reads]
        segs = [r["segment"] for r in reads]
        chunks = writes + ([reply] if reply is not None else [])
        for c in chunks:
            segs += c
        want["rpcordma.segment_count"] = [len(c) for c in chunks]
        want["rpcordma.rdma_handle"] = [s["handle"] for s in segs]
        want["rpcordma.rdma_length"] = [s["length"] for s in segs]
        want["rpcordma.rdma_offset"] = [s["offset"] for s in segs]
    elif proc == RDMA_ERROR:
        want["rpcordma.errcode"] = [msg["err"]]
        if msg["err"] == ERR_VERS:
            want["rpcordma.vers_low"] = [msg["vers_low"]]
            want["rpcordma.vers_high"] = [msg["vers_high"]]
    return want


def check_rpc(errors, frame, label, row, rpc):
    """The RPC message behind the transport header, as tshark reads it."""
    if rpc is None:
        # No RPC message here, or one tshark defers (Read list).
        for field in RPC_FIELDS:
            expect_field(errors, frame, label, row, field, [])
        return
    reply = rpc["exact"]["rpc.msgtyp"] == [1]
    for field in RPC_FIELDS:
        if field in rpc["exact"]:
            expect_field(errors, frame, label, row, field, rpc["exact"][field])
        elif field in rpc["every"]:
            got = row[field]
            want = rpc["every"][field]
            if not got or any(int(v, 0) != want for v in got):
                errors.append("frame %d (%s): %s: tshark reads %s, we encoded %d"
                              % (frame, label, field, got, want))
        elif field in rpc["strings"]:
            if row[field] != rpc["strings"][field]:
                errors.append("frame %d (%s): %s: tshark reads %s, we encoded %s"
                              % (frame, label, field, row[field], rpc["strings"][field]))
        elif not (reply and field in RPC_INFERRED) and field != "rpc.auth.machinename":
            expect_field(errors, frame, label, row, field, [])
    if not rpc["strings"] and row["rpc.auth.machinename"]:
        errors.append("frame %d (%s): rpc.auth.machinename: tshark reads %s, we sent none"
                      % (frame, label, row["rpc.auth.machinename"]))


def check(manifest, frames):
    errors = []
    messages = manifest["messages"]
    owned = {}
    for msg in messages:
        for p in msg["packets"]:
            owned[p["frame"]] = msg

    if len(frames) != manifest["frames"]:
        errors.append("tshark read %d frames, the generator wrote %d"
                      % (len(frames), manifest["frames"]))

    # Health of every frame, whichever message it belongs to.
    for n, row in sorted(frames.items()):
        label = owned[n]["label"] if n in owned else "?"
        if row["_ws.malformed"]:
            errors.append("frame %d (%s): malformed: %s"
                          % (n, label, ",".join(row["_ws.expert.message"])))
        for sev, text in zip(row["_ws.expert.severity"], row["_ws.expert.message"]):
            if int(sev, 0) >= PI_ERROR:
                errors.append("frame %d (%s): expert error: %s" % (n, label, text))

    dissected = 0
    for msg in messages:
        label = msg["label"]
        last = msg["frame"]
        for p in msg["packets"]:
            n = p["frame"]
            row = frames.get(n)
            if row is None:
                errors.append("frame %d (%s): missing from tshark's output" % (n, label))
                continue
            expect_field(errors, n, label, row, "infiniband.bth.opcode", [p["opcode"]])
            expect_field(errors, n, label, row, "infiniband.bth.psn", [p["psn"]])
            expect_field(errors, n, label, row, "infiniband.bth.destqp", [p["qpn"]])
            expect_field(errors, n, label, row, "infiniband.bth.padcnt", [0])
            if n != last and row["rpcordma.xid"]:
                errors.append("frame %d (%s): rpcordma dissected before the last SEND "
                              "of the message" % (n, label))
        row = frames.get(last)
        if row is None:
            continue
        if not row["rpcordma.xid"]:
            errors.append("frame %d (%s): tshark does not see an RPC-over-RDMA message "
                          "(header %s)" % (last, label, msg["hdr_hex"]))
            continue
        dissected += 1
        before = len(errors)
        for field, want in expected_rpcordma(msg).items():
            expect_field(errors, last, label, row, field, want)
        if len(msg["packets"]) > 1:
            expect_field(errors, last, label, row, "rpcordma.fragment",
                         [p["frame"] for p in msg["packets"]])
        check_rpc(errors, last, label, row, msg["rpc"])
        if len(errors) != before:
            errors.append("frame %d (%s): transport header as encoded: %s"
                          % (last, label, msg["hdr_hex"]))

    rpcordma_frames = sum(1 for row in frames.values() if row["rpcordma.xid"])
    if rpcordma_frames != len(messages):
        errors.append("tshark shows %d RPC-over-RDMA messages, the generator wrote %d"
                      % (rpcordma_frames, len(messages)))
    return errors, dissected


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generator", help="gen_roce_pcap to run")
    ap.add_argument("--workdir", help="where the capture and manifest go")
    ap.add_argument("--pcap", help="check this capture instead of generating one")
    ap.add_argument("--manifest", help="the manifest for --pcap")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--random", type=int, default=None,
                    help="number of random messages (generator default when omitted)")
    ap.add_argument("--tshark", default=os.environ.get("TSHARK", "tshark"))
    args = ap.parse_args()

    tshark = shutil.which(args.tshark)
    if tshark is None:
        print("FAIL: tshark (%s) not found; install Wireshark's tshark "
              "(`make deps` does)" % args.tshark, file=sys.stderr)
        return 1

    if args.pcap:
        if not args.manifest:
            ap.error("--pcap needs --manifest")
        pcap, manifest_path = args.pcap, args.manifest
    else:
        if not args.generator or not args.workdir:
            ap.error("give --generator and --workdir, or --pcap and --manifest")
        os.makedirs(args.workdir, exist_ok=True)
        pcap = os.path.join(args.workdir, "conformance.pcap")
        manifest_path = os.path.join(args.workdir, "conformance.json")
        cmd = [args.generator, pcap, manifest_path]
        if args.seed is not None or args.random is not None:
            cmd.append(str(args.seed if args.seed is not None else 20240607))
        if args.random is not None:
            cmd.append(str(args.random))
        subprocess.run(cmd, check=True)

    with open(manifest_path) as f:
        manifest = json.load(f)
    frames = run_tshark(tshark, pcap)
    errors, dissected = check(manifest, frames)
    version = subprocess.run([tshark, "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0]
    if errors:
        for e in errors:
            print("FAIL: " + e, file=sys.stderr)
        print("%d problem(s) in %s (%s)" % (len(errors), pcap, version), file=sys.stderr)
        return 1
    print("OK: %d messages in %d frames match %s (seed %d)"
          % (dissected, len(frames), version, manifest["seed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
