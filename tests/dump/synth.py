"""Builders for synthetic RoCEv2 captures, for the dump/ tests.

Frames are assembled layer by layer (link, IP, UDP, BTH) and written as
classic pcap files.  Checksums are left zero: neither libpcap nor
rpcrdma-dump looks at them, and RoCEv2 allows a zero UDP checksum.
Standard library only.
"""

import struct

ROCE_PORT = 4791

# Link types of the pcap file header (LINKTYPE_*).
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276

# RC opcodes.
SEND_FIRST = 0x00
SEND_MIDDLE = 0x01
SEND_LAST = 0x02
SEND_LAST_IMM = 0x03
SEND_ONLY = 0x04
SEND_ONLY_IMM = 0x05
RDMA_WRITE_ONLY = 0x0A
RDMA_READ_RESPONSE_ONLY = 0x10
ACK = 0x11
SEND_LAST_INV = 0x16
SEND_ONLY_INV = 0x17
UD_SEND_ONLY = 0x64


def words(*vals):
    return b"".join(struct.pack(">I", v & 0xffffffff) for v in vals)


def segment(handle, length, offset):
    return struct.pack(">IIQ", handle, length, offset)


def rpc_call(xid, prog, vers, proc, args=b""):
    # AUTH_NONE credential and verifier.
    return words(xid, 0, 2, prog, vers, proc, 0, 0, 0, 0) + args


def rpc_reply_success(xid, results=b""):
    return words(xid, 1, 0, 0, 0, 0) + results


def rdma_msg(xid, credit, payload, reads=(), writes=(), reply=None, proc=0, vers=1):
    """An RPC-over-RDMA header with chunk lists, then @payload.

    reads: (position, handle, length, offset) tuples; writes: lists of
    (handle, length, offset); reply: such a list or None.
    """
    out = words(xid, vers, credit, proc)
    for pos, h, l, o in reads:
        out += words(1, pos) + segment(h, l, o)
    out += words(0)
    for chunk in writes:
        out += words(1, len(chunk)) + b"".join(segment(*s) for s in chunk)
    out += words(0)
    if reply is None:
        out += words(0)
    else:
        out += words(1, len(reply)) + b"".join(segment(*s) for s in reply)
    return out + payload


def bth(opcode, qp, psn, pad=0, ext=None, payload=b""):
    """BTH, an optional 4-byte IETH/ImmDt, the payload, pad bytes and ICRC."""
    hdr = struct.pack(">BBHBBHBBH", opcode, (pad & 3) << 4, 0xffff, 0,
                      (qp >> 16) & 0xff, qp & 0xffff, 0x80, (psn >> 16) & 0xff, psn & 0xffff)
    return hdr + (ext or b"") + payload + b"\0" * pad + b"\xde\xad\xbe\xef"


def udp(payload, dport=ROCE_PORT, sport=49152):
    return struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload


def ipv4(src, dst, payload, proto=17, frag=0x4000):
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, frag, 64, proto, 0,
                      bytes(src), bytes(dst))
    return hdr + payload


def ipv6(src, dst, payload, next_header=17, ext=b""):
    """@ext: pre-built extension headers; @next_header names the first one."""
    body = ext + payload
    hdr = struct.pack(">IHBB16s16s", 0x60000000, len(body), next_header, 64, bytes(src), bytes(dst))
    return hdr + body


def ether(payload, ethertype, vlans=()):
    out = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01"
    for tpid, tci in vlans:
        out += struct.pack(">HH", tpid, tci)
    return out + struct.pack(">H", ethertype) + payload


def sll(payload, ethertype):
    return struct.pack(">HHH8sH", 0, 1, 6, b"\x02\0\0\0\0\x01\0\0", ethertype) + payload


def sll2(payload, ethertype):
    return struct.pack(">HHIHBB8s", ethertype, 0, 2, 1, 0, 6, b"\x02\0\0\0\0\x01\0\0") + payload


def pad_ethernet(frame):
    """Ethernet pads short frames to 60 bytes; the parser must ignore it."""
    return frame + b"\0" * max(0, 60 - len(frame))


class Pcap:
    """Collects frames; frame numbers count from 1, as tshark's do."""

    def __init__(self, linktype=LINKTYPE_ETHERNET, snaplen=262144):
        self.linktype = linktype
        self.snaplen = snaplen
        self.frames = []

    def add(self, frame, caplen=None):
        self.frames.append((frame, len(frame) if caplen is None else caplen))
        return len(self.frames)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, self.snaplen, self.linktype))
            for i, (frame, caplen) in enumerate(self.frames):
                f.write(struct.pack("<IIII", 1000 + i, 0, caplen, len(frame)))
                f.write(frame[:caplen])


def split_send(message, mtu):
    """Cut a Send into FIRST/MIDDLE.../LAST (or ONLY) payloads."""
    if len(message) <= mtu:
        return [(SEND_ONLY, message)]
    parts = [message[i:i + mtu] for i in range(0, len(message), mtu)]
    ops = [SEND_FIRST] + [SEND_MIDDLE] * (len(parts) - 2) + [SEND_LAST]
    return list(zip(ops, parts))


def send_packets(message, qp, psn, mtu=1024, last_op=None, ext=None):
    """BTH packets of one Send; the last one carries the pad count."""
    out = []
    parts = split_send(message, mtu)
    for i, (op, part) in enumerate(parts):
        e = None
        if i == len(parts) - 1:
            if last_op is not None:
                op = last_op
            e = ext
            pad = (-len(part)) % 4
        else:
            pad = 0
        out.append(bth(op, qp, (psn + i) & 0xffffff, pad, e, part))
    return out
