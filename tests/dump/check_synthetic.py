#!/usr/bin/env python3
"""dump/synthetic: reassembly, link types and robustness of rpcrdma-dump.

The kernel capture has only single-packet Sends, so this test builds
captures that exercise the rest of the frame parser and the reassembler:

  clean.pcap     multi-packet Sends (with pad count, IETH, ImmDt, an
                 interleaved reply from the other end on the same QP number),
                 VLAN and QinQ tags, IPv6 with an extension header, and
                 frames that must be ignored (RDMA Write, Read Response, UD,
                 another UDP port, an IP fragment).  Checked against our own
                 expectations and against tshark, like the kernel capture.
  problems.pcap  Sends the reassembler must refuse or report: orphan MIDDLE,
                 PSN gap, FIRST then ONLY, a snap-length cut, a bad pad
                 count, an Ethernet trailer, a PSN wrap, a Send over 16 MiB,
                 more open flows than the table holds, a Send still open at
                 the end.
  sll/sll2/raw   the same small exchange over the other link types.
  fuzz           mutated frames and hex lines: the tool must exit 0 and print
                 only schema-valid JSON (run under ASan/UBSan to catch
                 memory errors).
  exits          status 0/1/2 for good input, unreadable input, bad usage.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

import check_capture
import dumpjson
import synth as s

A4, B4 = [10, 0, 0, 1], [10, 0, 0, 2]
A6 = [0xfd, 0] + [0] * 13 + [1]
B6 = [0xfd, 0] + [0] * 13 + [2]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def hexid(v):
    return "0x%08x" % v


def v4(payload, src=A4, dst=B4, vlans=(), **kw):
    return s.ether(s.ipv4(src, dst, s.udp(payload, **kw)), 0x0800, vlans)


def call_msg(xid, nbytes=0, proc=0, **kw):
    return s.rdma_msg(xid, 32, s.rpc_call(xid, 100003, 3, proc, b"\x5a" * nbytes), **kw)


def reply_msg(xid, nbytes=0, **kw):
    return s.rdma_msg(xid, 16, s.rpc_reply_success(xid, b"\xa5" * nbytes), **kw)


def expect_call(xid, proc=0, **extra):
    e = {"xid": hexid(xid), "vers": 1, "credit": 32, "proc": "RDMA_MSG",
         "rpc": {"msg_type": "CALL", "xid": hexid(xid), "prog": 100003, "vers": 3, "proc": proc}}
    e.update(extra)
    return e


def expect_reply(xid, **extra):
    e = {"xid": hexid(xid), "vers": 1, "credit": 16, "proc": "RDMA_MSG",
         "rpc": {"msg_type": "REPLY", "xid": hexid(xid), "reply_stat": "MSG_ACCEPTED",
                 "accept_stat": "SUCCESS"}}
    e.update(extra)
    return e


# Where tshark 4.0 cannot follow: it does not hand Sends with immediate data
# to RPC-over-RDMA, and it decodes the RPC message of a call with a Read
# chunk only once the RDMA Reads it never sees here complete.
TSHARK_BLIND = [(12, "rpcrdma-dump prints a message tshark does not see"),
                (15, "rpcrdma-dump prints a message tshark does not see"),
                (5, "tshark found no RPC message")]


def build_clean():
    """Returns (pcap, [(frame, expected subset)])."""
    p = s.Pcap()
    exp = []

    # A 2.5 KB call in three packets; its length is 2 mod 4, so the LAST
    # carries a pad count of 2.  The reply from the other end uses the same
    # QP number and interleaves with it.
    call = call_msg(0x100, 2502, proc=7, reads=[(112, 0x10, 4096, 0x2000)])
    assert len(call) % 4 == 2
    cpk = s.send_packets(call, 0x17, 100)
    reply = reply_msg(0x0ff, 1500)
    rpk = s.send_packets(reply, 0x17, 7000, last_op=s.SEND_LAST_INV, ext=b"\0\0\x12\x34")
    assert len(cpk) == 3 and len(rpk) == 2
    p.add(v4(cpk[0]))
    p.add(v4(rpk[0], src=B4, dst=A4))
    p.add(v4(cpk[1]))
    exp.append((p.add(v4(rpk[1], src=B4, dst=A4)), expect_reply(0x0ff)))
    exp.append((p.add(v4(cpk[2])), expect_call(
        0x100, proc=7, reads=[{"position": 112, "handle": "0x00000010", "length": 4096,
                               "offset": "0x0000000000002000"}], writes=[], reply=None)))

    # Frames that carry no Send, or not over RC RoCEv2: all ignored.
    m = call_msg(0x200)
    p.add(v4(s.bth(s.RDMA_WRITE_ONLY, 0x17, 5, 0, b"\0" * 16, m)))
    p.add(v4(s.bth(s.RDMA_READ_RESPONSE_ONLY, 0x17, 6, 0, b"\0" * 4, m)))
    p.add(v4(s.bth(s.ACK, 0x17, 7, 0, b"\0" * 4)))
    p.add(v4(s.bth(s.UD_SEND_ONLY, 0x17, 8, 0, b"\0" * 8, m)))
    p.add(v4(s.bth(s.SEND_ONLY, 0x17, 9, 0, None, m), dport=4792))
    p.add(s.ether(s.ipv4(A4, B4, s.udp(s.bth(s.SEND_ONLY, 0x17, 9, 0, None, m)), frag=0x2000),
                  0x0800))

    # ImmDt and IETH variants of ONLY and LAST.
    exp.append((p.add(v4(s.bth(s.SEND_ONLY_IMM, 0x18, 1, 0, b"\x01\x02\x03\x04",
                               call_msg(0x300)))), expect_call(0x300)))
    exp.append((p.add(v4(s.bth(s.SEND_ONLY_INV, 0x18, 2, 0, b"\0\0\x22\x22", reply_msg(0x301)),
                         src=B4, dst=A4)), expect_reply(0x301)))
    pk = s.send_packets(call_msg(0x302, 1200), 0x18, 3, last_op=s.SEND_LAST_IMM,
                        ext=b"\xff\xff\xff\xff")
    p.add(v4(pk[0]))
    exp.append((p.add(v4(pk[1])), expect_call(0x302)))

    # VLAN and QinQ tags.
    exp.append((p.add(v4(s.bth(s.SEND_ONLY, 0x19, 1, 0, None, call_msg(0x400)),
                         vlans=[(0x8100, 7)])), expect_call(0x400)))
    pk = s.send_packets(call_msg(0x401, 1100), 0x19, 2)
    p.add(v4(pk[0], vlans=[(0x88a8, 1), (0x8100, 7)]))
    exp.append((p.add(v4(pk[1], vlans=[(0x88a8, 1), (0x8100, 7)])), expect_call(0x401)))

    # IPv6, plain and with a Hop-by-Hop Options header (8 bytes of PadN).
    exp.append((p.add(s.ether(s.ipv6(A6, B6, s.udp(s.bth(s.SEND_ONLY, 0x1a, 1, 0, None,
                                                           call_msg(0x500)))), 0x86dd)),
                expect_call(0x500)))
    hbh = bytes([17, 0, 1, 4, 0, 0, 0, 0])
    pk = s.send_packets(reply_msg(0x501, 3000), 0x1a, 2)
    for i, pkt in enumerate(pk):
        f = p.add(s.ether(s.ipv6(B6, A6, s.udp(pkt), next_header=0, ext=hbh), 0x86dd))
    exp.append((f, expect_reply(0x501)))

    # Chunk lists in a multi-packet Send: Write list and Reply chunk.
    msg = call_msg(0x600, 1000, proc=6, writes=[[(0x61, 65536, 0x1000), (0x62, 4096, 0x9000)]],
                   reply=[(0x63, 512, 0xa000)])
    pk = s.send_packets(msg, 0x1b, 0x10)
    p.add(v4(pk[0]))
    exp.append((p.add(v4(pk[1])), expect_call(
        0x600, proc=6, reads=[],
        writes=[[{"handle": "0x00000061", "length": 65536, "offset": "0x0000000000001000"},
                 {"handle": "0x00000062", "length": 4096, "offset": "0x0000000000009000"}]],
        reply=[{"handle": "0x00000063", "length": 512, "offset": "0x000000000000a000"}])))
    # RDMA_NOMSG, whose message travels in the Reply chunk.
    nomsg = s.rdma_msg(0x601, 16, b"", reply=[(0x63, 136, 0xa000)], proc=1)
    exp.append((p.add(v4(s.bth(s.SEND_ONLY, 0x1b, 0x12, 0, None, nomsg), src=B4, dst=A4)),
                {"xid": hexid(0x601), "proc": "RDMA_NOMSG", "reads": [], "writes": [],
                 "reply": [{"handle": "0x00000063", "length": 136,
                            "offset": "0x000000000000a000"}]}))
    return p, exp


def build_problems(tmp_big):
    """Returns (pcap, [(frame, expected subset or None, invalid substring or None)])."""
    p = s.Pcap()
    exp = []

    def msg(frame, subset=None, invalid=None):
        exp.append((frame, subset, invalid))

    # 1. The capture starts inside a Send: one report, the LAST is quiet.
    pk = s.send_packets(call_msg(0x700, 2500), 0x20, 50)
    msg(p.add(v4(pk[1])), None, "QP 0x000020: SEND MIDDLE without SEND FIRST")
    p.add(v4(pk[2]))
    # 2. A PSN gap: the MIDDLE with PSN 102 after the FIRST with 100.
    pk = s.send_packets(call_msg(0x701, 3500), 0x21, 100)
    p.add(v4(pk[0]))
    msg(p.add(v4(pk[2])), None, "PSN gap, expected 0x000065, got 0x000066")
    p.add(v4(pk[3]))
    # 3. A FIRST, then an ONLY on the same flow: the partial is lost, the
    #    ONLY decodes.
    pk = s.send_packets(call_msg(0x702, 2000), 0x22, 1)
    p.add(v4(pk[0]))
    f = p.add(v4(s.bth(s.SEND_ONLY, 0x22, 9, 0, None, call_msg(0x703))))
    msg(f, None, "SEND ONLY before SEND LAST")
    msg(f, expect_call(0x703), None)
    # 4. The snap length cut a SEND ONLY after the transport header.
    frame = v4(s.bth(s.SEND_ONLY, 0x23, 1, 0, None, call_msg(0x704, 400)))
    msg(p.add(frame, caplen=14 + 20 + 8 + 12 + 28 + 8),
        {"xid": hexid(0x704), "reads": [], "writes": [], "reply": None},
        "Send truncated by the capture")
    # 5. Pad count and ICRC must both come off: a 19-byte RDMA_ERROR (pad
    #    1) is one byte short of its error code.  Taking the frame's end
    #    instead of the UDP length would also swallow the 4-byte trailer.
    err19 = s.words(0x705, 1, 1, 4) + b"\0\0\0"
    msg(p.add(v4(s.bth(s.SEND_ONLY, 0x24, 1, 1, None, err19)) + b"\x02\x00\x00\x02"),
        {"xid": hexid(0x705), "proc": "RDMA_ERROR"}, "RDMA_ERROR truncated at byte 16")
    # 6. A pad count larger than the payload.
    msg(p.add(s.pad_ethernet(v4(s.bth(s.SEND_ONLY, 0x24, 2, 3, None, b"")[:12] + b"\0" * 4))),
        None, "malformed SEND ONLY")
    # 7. An empty Send in a frame Ethernet padded to 60 bytes.
    msg(p.add(s.pad_ethernet(v4(s.bth(s.SEND_ONLY, 0x24, 3, 0, None, b"")))), None,
        "shorter than the fixed header at byte 0")
    # 8. PSN wrap from 0xffffff to 0 inside one Send.
    pk = s.send_packets(call_msg(0x706, 1500), 0x25, 0xffffff)
    p.add(v4(pk[0]))
    msg(p.add(v4(pk[1])), expect_call(0x706), None)
    # 9. Garbage in a valid Send: decoded as far as it goes.
    msg(p.add(v4(s.bth(s.SEND_ONLY, 0x25, 2, 0, None, s.words(0x707, 1, 1, 0, 7)),
                 src=B4, dst=A4)),
        {"xid": hexid(0x707), "reads": [], "writes": [], "reply": None},
        "list discriminator is neither 0 nor 1")
    # 10. A Send larger than 16 MiB, then an ONLY on the same flow.
    mtu = 4096
    big = b"\0" * (16 * 1024 * 1024 + mtu)
    pk = s.send_packets(s.words(0x709, 1, 1, 0) + big, 0x26, 0, mtu=mtu)
    over = (16 * 1024 * 1024) // mtu  # index of the packet that crosses the limit
    for i, pkt in enumerate(pk):
        f = p.add(v4(pkt))
        if i == over:
            msg(f, None, "QP 0x000026: partial Send discarded: Send larger than 16 MiB")
    msg(p.add(v4(s.bth(s.SEND_ONLY, 0x26, len(pk), 0, None, call_msg(0x70a)))), expect_call(0x70a))
    # 11. More flows with a Send open than the table holds: the oldest go.
    first = s.send_packets(call_msg(0x708, 1100), 0, 0)[0]
    nflows = 1024 + 10
    for qp in range(0x1000, 0x1000 + nflows):
        f = p.add(v4(first[:5] + bytes([qp >> 16, (qp >> 8) & 0xff, qp & 0xff]) + first[8:]))
        if qp >= 0x1000 + 1024:
            msg(f, None, "QP 0x%06x: partial Send discarded: more than 1024 QPs" % (qp - 1024))
    flood_start = f - nflows + 1
    # 12. A Send still open when the capture ends; opening it evicts one
    #    more flow.  The flows left open are reported at the end, in the
    #    order of their last frames.
    pk = s.send_packets(call_msg(0x70b, 2000), 0x27, 1)
    last = p.add(v4(pk[0]))
    msg(last, None, "QP 0x00100a: partial Send discarded: more than 1024 QPs")
    for i in range(11, nflows):
        msg(flood_start + i, None, "QP 0x%06x: partial Send discarded: the capture ends"
            % (0x1000 + i))
    msg(last, None, "QP 0x000027: partial Send discarded: the capture ends before SEND LAST")
    return p, exp


def build_link(linktype):
    """A FIRST/LAST call and an ONLY reply over another link type."""
    p = s.Pcap(linktype)
    exp = []
    pk = s.send_packets(call_msg(0x800, 1500), 0x30, 1)
    rep = s.bth(s.SEND_ONLY, 0x30, 9, 0, None, reply_msg(0x800))

    def wrap(bth_pkt, src, dst, six=False):
        ip = (s.ipv6(src, dst, s.udp(bth_pkt)) if six else s.ipv4(src, dst, s.udp(bth_pkt)))
        et = 0x86dd if six else 0x0800
        if linktype == s.LINKTYPE_LINUX_SLL:
            return s.sll(ip, et)
        if linktype == s.LINKTYPE_LINUX_SLL2:
            return s.sll2(ip, et)
        return ip

    p.add(wrap(pk[0], A4, B4))
    exp.append((p.add(wrap(pk[1], A4, B4)), expect_call(0x800)))
    exp.append((p.add(wrap(rep, B6, A6, six=True)), expect_reply(0x800)))
    return p, exp


def matches(rec, subset):
    return all(k in rec and rec[k] == v for k, v in subset.items())


def check_expected(name, records, exp):
    """@exp: (frame, subset or None, invalid substring or None) in output order."""
    check(len(records) == len(exp), "%s: %d records, %d expected" % (name, len(records), len(exp)))
    for i, (rec, (frame, subset, invalid)) in enumerate(zip(records, exp)):
        what = "%s record %d (frame %d)" % (name, i + 1, frame)
        ok = check(rec.get("frame") == frame, "%s: printed at frame %s" % (what, rec.get("frame")))
        if subset:
            ok &= check(matches(rec, subset), "%s: expected %s, got %s" % (what, subset, rec))
        if invalid:
            ok &= check(invalid in rec.get("invalid", ""),
                        "%s: expected invalid ~ %r, got %s" % (what, invalid, rec))
        else:
            ok &= check("invalid" not in rec, "%s: unexpected invalid: %s" % (what, rec))
        if not ok and len(failures) > 40:
            break


def run(tool, args, **kw):
    try:
        return dumpjson.run_dump(tool, args, **kw)
    except dumpjson.SchemaError as e:
        failures.append(str(e))
        return []


def mutate(rng, frame):
    b = bytearray(frame)
    for _ in range(rng.randint(1, 8)):
        what = rng.random()
        if what < 0.6 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif what < 0.8 and b:
            # Hit the length, opcode and pad fields more often.
            i = rng.choice([12, 13, 16, 17, 38, 39, 42, 43, 43]) % len(b)
            b[i] = rng.randrange(256)
        else:
            del b[rng.randrange(len(b) + 1):]
    return bytes(b)


def fuzz(tool, tmp, frames, hexfile):
    rng = random.Random(4791)
    p = s.Pcap()
    for _ in range(4000):
        f = mutate(rng, rng.choice(frames))
        p.add(f, caplen=rng.choice([len(f), len(f), len(f), rng.randint(0, len(f))]))
    path = os.path.join(tmp, "fuzz.pcap")
    p.write(path)
    run(tool, [path], has_frame=True)

    lines = []
    seeds = []
    with open(hexfile) as f:
        for line in f:
            if line.startswith("#"):
                continue
            try:
                seeds.append(bytes.fromhex(line.replace(" ", "")))
            except ValueError:
                pass  # the deliberately bad lines
    seeds = [x for x in seeds if x]
    for _ in range(3000):
        if rng.random() < 0.2:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
        else:
            data = mutate(rng, rng.choice(seeds))
        lines.append(data.hex())
    lines.append("0" * 1001)  # odd
    lines.append("xyz")
    path = os.path.join(tmp, "fuzz.hex")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    recs = run(tool, ["-x", path], has_frame=False)
    nonblank = sum(1 for line in lines if line)
    check(len(recs) == nonblank, "fuzz.hex: %d records for %d lines" % (len(recs), nonblank))


def exits(tool, tmp, good):
    def status(args, stdin=None):
        return subprocess.run([tool] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              input=stdin)

    r = status([good])
    check(r.returncode == 0, "exit status %d on a good capture" % r.returncode)
    r = status([os.path.join(tmp, "does-not-exist.pcap")])
    check(r.returncode == 1 and r.stderr, "a missing file: status %d" % r.returncode)
    junk = os.path.join(tmp, "junk.pcap")
    with open(junk, "wb") as f:
        f.write(b"this is not a capture file at all")
    check(status([junk]).returncode == 1, "a file that is not a capture: status not 1")
    # A capture cut inside its last record: what was read is printed.
    with open(good, "rb") as f:
        data = f.read()
    cut = os.path.join(tmp, "cut.pcap")
    with open(cut, "wb") as f:
        f.write(data[:-10])
    r = status([cut])
    check(r.returncode == 1 and r.stdout.count(b"\n") > 0,
          "a truncated capture: status %d, %d lines" % (r.returncode, r.stdout.count(b"\n")))
    r = status(["-", "-x"], stdin=b"11223344000000010000002000000004000000020\n")
    check(r.returncode == 0 and b"odd number" in r.stdout, "hex from stdin: %r" % r.stdout)
    for bad in ([], ["-q", good], [good, good], ["--bogus", good]):
        r = status(bad)
        check(r.returncode == 2 and b"usage:" in r.stderr, "bad usage %r: status %d" %
              (bad, r.returncode))
    for helpopt in ("-h", "--help"):
        r = status([helpopt])
        check(r.returncode == 0 and b"usage:" in r.stdout, "%s: status %d" % (helpopt, r.returncode))
    r = status(["--no-rpc", good])
    check(r.returncode == 0 and b'"rpc"' not in r.stdout and b'"xid"' in r.stdout,
          "--no-rpc still prints rpc objects")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--hex", required=True, help="messages.hex, seeds for the hex fuzzing")
    ap.add_argument("--tshark", default="tshark")
    args = ap.parse_args()
    tshark = shutil.which(args.tshark)
    if not tshark:
        print("FAIL: tshark not found in PATH")
        sys.exit(1)

    with tempfile.TemporaryDirectory(prefix="dump-synthetic-") as tmp:
        clean, cexp = build_clean()
        path = os.path.join(tmp, "clean.pcap")
        clean.write(path)
        records, problems = check_capture.check_against_tshark(args.tool, path, tshark)
        failures.extend("clean.pcap vs tshark: " + p for p in problems
                        if not any(p.startswith("frame %d: %s" % b) for b in TSHARK_BLIND))
        check_expected("clean.pcap", records, [(f, e, None) for f, e in cexp])

        probs, pexp = build_problems(tmp)
        path = os.path.join(tmp, "problems.pcap")
        probs.write(path)
        check_expected("problems.pcap", run(args.tool, [path], has_frame=True), pexp)
        os.unlink(path)

        for name, lt in (("sll", s.LINKTYPE_LINUX_SLL), ("sll2", s.LINKTYPE_LINUX_SLL2),
                         ("raw", s.LINKTYPE_RAW)):
            pc, exp = build_link(lt)
            path = os.path.join(tmp, name + ".pcap")
            pc.write(path)
            check_expected(name + ".pcap", run(args.tool, [path], has_frame=True),
                           [(f, e, None) for f, e in exp])

        frames = [f for f, _ in clean.frames] + [f for f, _ in probs.frames[:40]]
        fuzz(args.tool, tmp, frames, args.hex)
        exits(args.tool, tmp, os.path.join(tmp, "clean.pcap"))

    if failures:
        for f in failures[:60]:
            print("  " + f)
        print("FAIL: %d problem(s)" % len(failures))
        sys.exit(1)
    print("PASS: synthetic captures, link types, fuzzing and exit statuses")


if __name__ == "__main__":
    main()
