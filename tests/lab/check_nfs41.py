#!/usr/bin/env python3
"""Host-side check of nfsd's NFSv4.1 callbacks to our client (nfs41.pcap).

Usage: check_nfs41.py [--new-conn] PCAP DUMP_JSONL SERVER_IP CLIENT_IP

DUMP_JSONL is rpcrdma-dump's output for PCAP.  Passes (exit 0, one summary
line) when no record is invalid and there are CB_COMPOUND CALLs (program
0x40000000, procedure 1) from SERVER_IP to CLIENT_IP each with a REPLY of the
same XID from CLIENT_IP, and every such exchange is on a queue pair of the
client's forward connection: the CALL goes to a QP that receives the forward
replies, its REPLY to a QP that receives the forward calls (RoCEv2 BTH
destination QPs, read from the capture here).  The summary gives the
exchanges, the QP pairs they used, CB_NULLs, and the credit values of the
server's reverse calls (what nfsd asks for) and of our replies (what we grant).
"""
import json
import struct
import sys

CB_PROG = 0x40000000
NFS_PROG = 100003


def frames(path):
    """Frame number -> (src, dst, destination QP, PSN) for RoCEv2 frames."""
    out = {}
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
            if linktype == 1 and pkt[12:14] != b"\x08\x00":
                continue
            ip = pkt[off:]
            if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
                continue
            ihl = (ip[0] & 15) * 4
            udp = ip[ihl:]
            if len(udp) < 8 + 12 or struct.unpack(">H", udp[2:4])[0] != 4791:
                continue
            bth = udp[8:20]
            dqp = int.from_bytes(bth[5:8], "big")
            psn = int.from_bytes(bth[9:12], "big")
            out[n] = (".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20])), dqp, psn)
    return out


def main():
    args = sys.argv[1:]
    new_conn = bool(args) and args[0] == "--new-conn"
    if new_conn:
        args = args[1:]
    if len(args) != 4:
        raise SystemExit(__doc__)
    pcap, jsonl, server, client = args
    fr = frames(pcap)
    records = [json.loads(line) for line in open(jsonl) if line.strip()]
    invalid = [r for r in records if "invalid" in r]
    if invalid:
        print(f"{len(invalid)} of {len(records)} records invalid, first: {invalid[0]}")
        return 1
    calls, replies, nulls = [], [], 0
    fore_call_qps, fore_reply_qps = set(), set()
    ask, grant = set(), set()
    first_client_qp = None
    seen_psn, rc_dups = set(), 0
    for r in records:
        rpc = r.get("rpc")
        if not rpc or r.get("frame") not in fr:
            continue
        src, dst, dqp, psn = fr[r["frame"]]
        # The same packet again (same QP, same PSN) is the RC layer's
        # retransmission, not a second message: seen on a loaded TCG guest.
        if (src, dqp, psn) in seen_psn:
            rc_dups += 1
            continue
        seen_psn.add((src, dqp, psn))
        if rpc["msg_type"] == "CALL" and src == client and rpc.get("prog") == NFS_PROG:
            fore_call_qps.add(dqp)
        elif rpc["msg_type"] == "CALL" and src == server and rpc.get("prog") == CB_PROG:
            ask.add(r.get("credit"))
            if rpc.get("proc") == 1:
                calls.append((rpc["xid"], r, dqp))
            else:
                nulls += 1
        elif rpc["msg_type"] == "REPLY" and src == server and dst == client:
            fore_reply_qps.add(dqp)
            if first_client_qp is None:
                first_client_qp = dqp
        elif rpc["msg_type"] == "REPLY" and src == client and dst == server:
            replies.append((rpc["xid"], r, dqp))
    # XIDs repeat across connections and sessions: each CALL pairs with the
    # first unused REPLY of its XID after it, in capture order
    pairs, used, unmatched = [], set(), []
    for xid, r, dqp in calls:
        for k, (rx, rr, rdqp) in enumerate(replies):
            if k not in used and rx == xid and rr["frame"] > r["frame"]:
                used.add(k)
                pairs.append(((r, dqp), (rr, rdqp)))
                break
        else:
            unmatched.append(xid)
    if not pairs:
        print(f"no CB_COMPOUND CALL {server} -> {client} with its REPLY among "
              f"{len(records)} records ({len(calls)} CB_COMPOUND calls seen)")
        return 1
    off_conn = [(c, rp) for (c, rp) in pairs
                if c[1] not in fore_reply_qps or rp[1] not in fore_call_qps]
    for (_, _), (rr, _) in pairs:
        grant.add(rr.get("credit"))
    qps = sorted({(c[1], rp[1]) for c, rp in pairs})
    line = (f"{len(records)} messages decoded, none invalid; {len(pairs)} CB_COMPOUND exchanges "
            f"{server} -> {client}, each REPLY with its CALL's XID ({len(unmatched)} unanswered), "
            f"on {len(qps)} QP pair(s) of the forward connection(s) "
            f"{', '.join(f'0x{a:x}/0x{b:x}' for a, b in qps)}; {nulls} CB_NULL; "
            f"credit values in nfsd's reverse calls {sorted(ask)}, in our replies {sorted(grant)}"
            + (f"; {rc_dups} RC retransmission(s) of a packet (same QP and PSN) not counted" if rc_dups else ""))
    if new_conn:
        old = [c for c, _ in pairs if c[1] == first_client_qp]
        line += f"; the first connection's client QP 0x{first_client_qp or 0:x}, {len(old)} exchange(s) on it"
        if old:
            print(f"FAIL: {line}")
            return 1
    if unmatched or off_conn:
        print(f"FAIL: {line}; {len(off_conn)} exchange(s) off the forward connection's QPs")
        return 1
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
