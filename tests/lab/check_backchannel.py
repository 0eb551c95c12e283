#!/usr/bin/env python3
"""Host-side check of an RFC 8167 backchannel exchange in a RoCEv2 capture.

Usage: check_backchannel.py PCAP DUMP_JSONL SERVER_IP CLIENT_IP

DUMP_JSONL is rpcrdma-dump's output for PCAP.  Passes (exit 0, one summary
line) when no record is invalid and the dump holds a reverse-direction
exchange: an RPC CALL of the NFSv4 callback program (CB_COMPOUND) in a
Send from SERVER_IP to CLIENT_IP, and a REPLY with the same XID from
CLIENT_IP to SERVER_IP.  Who sent a frame is read from the capture here
(classic pcap, Ethernet or raw IPv4), since the tool reports frames only.
"""
import json
import struct
import sys

NFS4_CALLBACK = 0x40000000  # the Linux client's callback program number
CB_COMPOUND = 1


def frame_addrs(path):
    """Frame number (1-based) -> (src, dst) IPv4 dotted strings."""
    addrs = {}
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise SystemExit("capture too short")
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            endian = ">"
        else:
            raise SystemExit("not a classic pcap file")
        linktype = struct.unpack(endian + "I", head[20:24])[0]
        n = 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            incl = struct.unpack(endian + "IIII", rec)[2]
            pkt = f.read(incl)
            n += 1
            off = 14 if linktype == 1 else 0
            if linktype == 1 and len(pkt) >= 14 and pkt[12:14] != b"\x08\x00":
                continue
            ip = pkt[off:off + 20]
            if len(ip) < 20 or ip[0] >> 4 != 4:
                continue
            addrs[n] = (".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20])))
    return addrs


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    pcap, jsonl, server, client = sys.argv[1:]
    addrs = frame_addrs(pcap)
    records = [json.loads(line) for line in open(jsonl) if line.strip()]
    invalid = [r for r in records if "invalid" in r]
    if invalid:
        print(f"{len(invalid)} of {len(records)} records invalid, first: {invalid[0]}")
        return 1
    calls, replies = {}, {}
    for r in records:
        rpc = r.get("rpc")
        if not rpc or "frame" not in r:
            continue
        src, dst = addrs.get(r["frame"], (None, None))
        if (rpc["msg_type"] == "CALL" and src == server and dst == client and
                rpc.get("prog") == NFS4_CALLBACK and rpc.get("proc") == CB_COMPOUND):
            calls.setdefault(rpc["xid"], r)
        elif rpc["msg_type"] == "REPLY" and src == client and dst == server:
            replies.setdefault(rpc["xid"], r)
    pairs = [(calls[x], replies[x]) for x in calls if x in replies]
    if not pairs:
        print(f"no CB_COMPOUND CALL {server} -> {client} with its REPLY among "
              f"{len(records)} records ({len(calls)} callback calls seen)")
        return 1
    c, r = pairs[0]
    print(f"{len(records)} messages decoded, none invalid; {len(pairs)} backchannel exchange(s): "
          f"CB_COMPOUND CALL xid {c['rpc']['xid']} frame {c['frame']} {server} -> {client} "
          f"({c['proc']}, credit {c['credit']}), REPLY frame {r['frame']} "
          f"({r['proc']}, credit {r['credit']}, {r['rpc'].get('accept_stat', r['rpc'].get('reply_stat'))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
