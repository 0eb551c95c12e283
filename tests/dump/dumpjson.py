"""Shared by the dump/ tests: run rpcrdma-dump and hold its output to the
JSON schema the tool promises (key names, key order, value types).

Standard library only.
"""

import json
import re
import subprocess
import sys

HEX8 = re.compile(r"0x[0-9a-f]{8}\Z")
HEX16 = re.compile(r"0x[0-9a-f]{16}\Z")
HEXBYTES = re.compile(r"(?:[0-9a-f]{2})*\Z")

TOP_KEYS = ["frame", "xid", "vers", "credit", "proc", "align", "thresh", "reads",
            "writes", "reply", "error", "optional", "rpc", "invalid"]
PROC_NAMES = {"RDMA_MSG": 0, "RDMA_NOMSG": 1, "RDMA_MSGP": 2, "RDMA_DONE": 3,
              "RDMA_ERROR": 4, "RDMA_OPTIONAL": 5}
ERROR_NAMES = {"ERR_VERS", "ERR_CHUNK", "ERR_INVAL_OPTION"}


class SchemaError(Exception):
    pass


def _pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise SchemaError("duplicate key in %r" % keys)
    return dict(pairs)


def _no_constants(name):
    raise SchemaError("non-standard JSON constant %s" % name)


def parse_line(line):
    """One line of output as a dict (insertion-ordered), or SchemaError."""
    try:
        return json.loads(line, object_pairs_hook=_pairs, parse_constant=_no_constants)
    except json.JSONDecodeError as e:
        raise SchemaError("not valid JSON: %s" % e)


def _is_uint(v, bits=32):
    return type(v) is int and 0 <= v < (1 << bits)


def _need(cond, what):
    if not cond:
        raise SchemaError(what)


def _check_keys(obj, allowed, required, what):
    keys = list(obj)
    _need(set(keys) <= set(allowed), "%s: unexpected keys %s" %
          (what, sorted(set(keys) - set(allowed))))
    _need(set(required) <= set(keys), "%s: missing keys %s" %
          (what, sorted(set(required) - set(keys))))
    order = [k for k in allowed if k in obj]
    _need(keys == order, "%s: keys out of order: %s" % (what, keys))


def _check_segment(seg, read):
    what = "read segment" if read else "segment"
    _need(type(seg) is dict, "%s is not an object" % what)
    keys = (["position"] if read else []) + ["handle", "length", "offset"]
    _check_keys(seg, keys, keys, what)
    if read:
        _need(_is_uint(seg["position"]), "bad position %r" % seg["position"])
    _need(type(seg["handle"]) is str and HEX8.match(seg["handle"]), "bad handle %r" % seg["handle"])
    _need(_is_uint(seg["length"]), "bad length %r" % seg["length"])
    _need(type(seg["offset"]) is str and HEX16.match(seg["offset"]), "bad offset %r" % seg["offset"])


def _check_chunk(chunk):
    _need(type(chunk) is list, "a chunk is not a list")
    for seg in chunk:
        _check_segment(seg, False)


def _check_rpc(rpc):
    _need(type(rpc) is dict, "rpc is not an object")
    _need(rpc.get("msg_type") in ("CALL", "REPLY"), "bad rpc msg_type %r" % rpc.get("msg_type"))
    if rpc["msg_type"] == "CALL":
        if "rpcvers" in rpc:
            _check_keys(rpc, ["msg_type", "xid", "rpcvers"], ["msg_type", "xid", "rpcvers"], "rpc")
        else:
            keys = ["msg_type", "xid", "prog", "vers", "proc"]
            _check_keys(rpc, keys, keys, "rpc")
            for k in keys[2:]:
                _need(_is_uint(rpc[k]), "bad rpc %s %r" % (k, rpc[k]))
    else:
        _check_keys(rpc, ["msg_type", "xid", "reply_stat", "accept_stat", "reject_stat",
                          "auth_stat"], ["msg_type", "xid", "reply_stat"], "rpc")
        _need(("accept_stat" in rpc) != ("reject_stat" in rpc),
              "rpc reply needs exactly one of accept_stat, reject_stat")
        for k in ("reply_stat", "accept_stat", "reject_stat", "auth_stat"):
            if k in rpc:
                _need(type(rpc[k]) is str or _is_uint(rpc[k]), "bad rpc %s" % k)
    _need(type(rpc["xid"]) is str and HEX8.match(rpc["xid"]), "bad rpc xid %r" % rpc["xid"])


def check_record(rec, has_frame):
    """Raise SchemaError unless @rec is a record rpcrdma-dump may print."""
    _need(type(rec) is dict, "record is not an object")
    _check_keys(rec, TOP_KEYS, ["frame"] if has_frame else [], "record")
    if has_frame:
        _need(_is_uint(rec["frame"], 64) and rec["frame"] >= 1, "bad frame %r" % rec["frame"])
    if "invalid" in rec:
        _need(type(rec["invalid"]) is str and rec["invalid"], "empty invalid")
    if "xid" not in rec:
        # A Send too short for the fixed words, a lost Send, a bad hex line.
        _check_keys(rec, ["frame", "invalid"], ["invalid"], "short record")
        return
    for k in ("vers", "credit", "proc"):
        _need(k in rec, "record has xid but no %s" % k)
    _need(HEX8.match(rec["xid"]), "bad xid %r" % rec["xid"])
    _need(_is_uint(rec["vers"]) and _is_uint(rec["credit"]), "bad vers or credit")
    proc = rec["proc"]
    _need(proc in PROC_NAMES or (_is_uint(proc) and proc not in PROC_NAMES.values()),
          "bad proc %r" % proc)
    lists = ("reads", "writes", "reply")
    present = [k in rec for k in lists]
    _need(all(present) or not any(present), "reads, writes and reply go together")
    if any(present):
        _need(proc in ("RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP"), "chunk lists in %s" % proc)
        _need(type(rec["reads"]) is list and type(rec["writes"]) is list, "lists are not lists")
        for seg in rec["reads"]:
            _check_segment(seg, True)
        for chunk in rec["writes"]:
            _check_chunk(chunk)
        if rec["reply"] is not None:
            _check_chunk(rec["reply"])
    elif proc in ("RDMA_MSG", "RDMA_NOMSG") and rec["vers"] in (1, 2):
        raise SchemaError("%s without chunk lists" % proc)
    if "align" in rec or "thresh" in rec:
        _need(proc == "RDMA_MSGP" and "align" in rec and "thresh" in rec, "misplaced align/thresh")
        _need(_is_uint(rec["align"]) and _is_uint(rec["thresh"]), "bad align/thresh")
    if "error" in rec:
        _need(proc == "RDMA_ERROR", "error in %s" % proc)
        err = rec["error"]
        _need(type(err) is dict, "error is not an object")
        _check_keys(err, ["code", "low", "high"], ["code"], "error")
        _need(err["code"] in ERROR_NAMES or _is_uint(err["code"]), "bad error code")
        if "low" in err or "high" in err:
            _need(err["code"] == "ERR_VERS" and "low" in err and "high" in err, "misplaced low/high")
    if "optional" in rec:
        _need(proc == "RDMA_OPTIONAL", "optional in %s" % proc)
        opt = rec["optional"]
        _check_keys(opt, ["type", "name", "info", "properties", "properties_error"], ["type"],
                    "optional")
        _need(_is_uint(opt["type"]), "bad optional type")
        if "info" in opt:
            _need(type(opt["info"]) is str and HEXBYTES.match(opt["info"]), "bad optional info")
        # The transport properties feature (docs/rpcrdma-v2-properties.md)
        # is named and, when its rdma_optinfo decodes, shown by property.
        if "name" in opt:
            _need(opt["type"] == 0xf6ab0001 and opt["name"] == "transport-properties",
                  "bad optional name")
        if "properties" in opt or "properties_error" in opt:
            _need("name" in opt and "info" in opt, "properties without the feature's name")
            _need(("properties" in opt) != ("properties_error" in opt),
                  "both properties and properties_error")
        if "properties" in opt:
            props = opt["properties"]
            _need(type(props) is dict, "properties is not an object")
            _check_keys(props, ["recv_size", "send_size", "credits", "reverse"], [],
                        "properties")
            _need(all(_is_uint(v) for v in props.values()), "bad property value")
    if "rpc" in rec:
        _need(proc in ("RDMA_MSG", "RDMA_MSGP"), "rpc in %s" % proc)
        _check_rpc(rec["rpc"])


def run_dump(tool, args, has_frame, allowed_status=(0,)):
    """Run the tool; return its records, checked against the schema."""
    proc = subprocess.run([tool] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode not in allowed_status:
        sys.stderr.write(proc.stderr.decode(errors="replace"))
        raise SchemaError("%s %s exited with status %d" % (tool, " ".join(args), proc.returncode))
    try:
        text = proc.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SchemaError("output is not UTF-8: %s" % e)
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            rec = parse_line(line)
            check_record(rec, has_frame)
        except SchemaError as e:
            raise SchemaError("output line %d: %s\n  %s" % (n, e, line[:300]))
        records.append(rec)
    if text and not text.endswith("\n"):
        raise SchemaError("output does not end with a newline")
    return records
