#!/usr/bin/env python3
"""Every function a public header declares is exported, and nothing else.

Usage: check_symbols.py LIBRARY HEADER...

Reads the function declarations of the headers (not static inline ones),
lists the shared library's defined dynamic symbols (nm -D --defined-only)
and fails, naming them, on any declared function the library does not
export and on any exported symbol no header declares.  A declaration
without RPCRDMA_EXTERN is reported too: it would be hidden in the library.
"""
import re
import subprocess
import sys

# Symbols the toolchain puts in every shared object.
TOOLCHAIN = {"_init", "_fini", "_edata", "_end", "__bss_start"}
# libc functions the library interposes so that its registration cache
# learns of memory freed or unmapped (src/provider/memhooks.c).
INTERPOSED = {"free", "realloc", "reallocarray", "munmap", "mremap", "madvise", "mmap",
              "mmap64", "shmat", "shmdt", "brk", "sbrk", "syscall"}


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Preprocessor lines, continuations included (macros such as X-lists).
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return text


def declarations(path):
    """Function names declared in @path, and those lacking RPCRDMA_EXTERN."""
    text = strip(open(path, encoding="utf-8").read())
    # Drop the extern "C" wrapper, then every braced body with what precedes
    # it up to the previous statement (struct, enum and inline definitions).
    # Drop the extern "C" wrapper, then every braced body (struct, enum and
    # inline function definitions): what precedes a body ends a statement.
    text = re.sub(r'extern\s+"C"\s*\{', " ", text)
    while True:
        new = re.sub(r"\{[^{}]*\}", ";", text)
        if new == text:
            break
        text = new
    found, bare = [], []
    for stmt in text.split(";"):
        s = " ".join(stmt.split())
        if not s or "(" not in s or re.match(r"(typedef|static)\b", s):
            continue
        if re.search(r"\b(static|typedef)\b", s):
            continue
        m = re.match(r"(.*?)\b([A-Za-z_]\w*)\s*\(", s)
        if not m or m.group(2) == "__attribute__":
            continue
        found.append(m.group(2))
        if "RPCRDMA_EXTERN" not in s:
            bare.append(m.group(2))
    return found, bare


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            syms.add(parts[2].split("@")[0])
    return syms - TOOLCHAIN - INTERPOSED


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib, headers = sys.argv[1], sys.argv[2:]
    declared, bare = {}, []
    for h in headers:
        names, b = declarations(h)
        for n in names:
            declared[n] = h
        bare += [f"{n} ({h})" for n in b]
    syms = exported(lib)
    missing = sorted(set(declared) - syms)
    extra = sorted(syms - set(declared))
    ok = True
    if bare:
        ok = False
        print("declared without RPCRDMA_EXTERN:", *bare, sep="\n  ")
    if missing:
        ok = False
        print("declared but not exported:",
              *[f"{n} ({declared[n]})" for n in missing], sep="\n  ")
    if extra:
        ok = False
        print("exported but declared by no public header:", *extra, sep="\n  ")
    print(f"{len(declared)} functions declared in {len(headers)} headers, "
          f"{len(syms)} symbols exported")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
