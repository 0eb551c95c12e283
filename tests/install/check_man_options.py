#!/usr/bin/env python3
"""A tool's man page lists exactly the options its --help lists.

Usage: check_man_options.py MANPAGE TOOL [ARGS...] [-- ARGS...]...

Runs TOOL once per argument list (each list ends at "--"; with none,
TOOL --help), gathers the long options (--name) of every output, renders
MANPAGE with man -l, and fails naming each option found in one and not
the other: a user reading the man page should learn every option the
program takes, and find no option it refuses.
"""
import os
import re
import subprocess
import sys

LONG_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")


def long_options(text):
    return set(LONG_OPTION.findall(text))


def help_text(tool, args):
    out = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    return out.stdout + out.stderr


def man_text(page):
    env = dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8")
    out = subprocess.run(["man", "-l", page], capture_output=True, text=True, env=env,
                         check=True, timeout=60)
    # man renders "\-" as U+2010 or U+2212 in some locales; fold them back.
    text = out.stdout.replace("\u2010", "-").replace("\u2212", "-")
    # Undo a word hyphenated across a line end ("--mount-\n   port").
    return re.sub(r"-\n\s+", "-", text)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    page, tool = sys.argv[1], sys.argv[2]
    runs, cur = [], []
    for a in sys.argv[3:]:
        if a == "--":
            runs.append(cur)
            cur = []
        else:
            cur.append(a)
    if cur or not runs:
        runs.append(cur or ["--help"])
    in_help = set()
    for args in runs:
        in_help |= long_options(help_text(tool, args))
    in_man = long_options(man_text(page))
    ok = True
    if not in_help:
        print(f"{tool}: no option found in its help output")
        return 1
    missing = sorted(in_help - in_man)
    stale = sorted(in_man - in_help)
    if missing:
        ok = False
        print(f"{page}: options of {os.path.basename(tool)} the man page lacks:",
              *missing, sep="\n  ")
    if stale:
        ok = False
        print(f"{page}: options in the man page that {os.path.basename(tool)} "
              "does not list:", *stale, sep="\n  ")
    print(f"{len(in_help)} options in the help, {len(in_man)} in the man page")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
