#!/usr/bin/env python3
"""dump/hex: rpcrdma-dump -x on hand-written messages against expected JSONL.

messages.hex holds one message per line, each under a comment saying what
it is: RDMA_ERROR (ERR_VERS, ERR_CHUNK, ERR_INVAL_OPTION), RDMA_NOMSG,
RDMA_MSGP, a Version Two RDMA_OPTIONAL, and invalid inputs the tool must
report and step over.  The output must equal expected.jsonl record for
record, key order included, and satisfy the schema of dumpjson.py.
"""

import argparse
import sys

import dumpjson


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--expected", required=True)
    args = ap.parse_args()

    try:
        got = dumpjson.run_dump(args.tool, ["-x", args.input], has_frame=False)
        with open(args.expected, encoding="utf-8") as f:
            want = [dumpjson.parse_line(line) for line in f if line.strip()]
        for rec in want:
            dumpjson.check_record(rec, has_frame=False)
    except (dumpjson.SchemaError, OSError) as e:
        fail(str(e))

    bad = 0
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        # Compare as key/value lists so key order counts too.
        if g is None or w is None or list(g.items()) != list(w.items()):
            bad += 1
            print("record %d differs:\n  got      %s\n  expected %s" % (i + 1, g, w))
    if len(got) != len(want):
        fail("%d records printed, %d expected" % (len(got), len(want)))
    if bad:
        fail("%d record(s) differ" % bad)
    print("PASS: %d records as expected" % len(got))


if __name__ == "__main__":
    main()
