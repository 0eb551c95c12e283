#!/usr/bin/env python3
"""No words glued together by an alternating-font man macro.

Usage: check_man_macros.py PAGE...

.BR, .RB, .IR, .RI, .BI and .IB join their arguments without spaces,
alternating the font; an unquoted prose argument after another one, as in
".RB ( name ).  Memory declared with", renders "Memorydeclaredwith" and
man --warnings says nothing.  Fails naming each line where two adjacent
unquoted arguments both start with a letter or digit.
"""
import re
import shlex
import sys

ALTERNATING = re.compile(r"^\.(BR|RB|IR|RI|BI|IB)\s+(.*)$")


def glued(args_text):
    # Arguments as troff splits them: on blanks, "..." quoted.
    try:
        lex = shlex.shlex(args_text, posix=False)
        lex.whitespace_split = True
        lex.quotes = '"'
        args = list(lex)
    except ValueError:
        return None
    for a, b in zip(args, args[1:]):
        if a.startswith('"') or b.startswith('"'):
            continue
        # A troff escape ends the first: \(dq, \fR, \*X are not words.
        if re.search(r"\\(\(..|f.|\*.)$", a):
            continue
        if re.match(r"[A-Za-z0-9]", a[-1:]) and re.match(r"[A-Za-z0-9]", b):
            return f"{a!r} {b!r}"
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    for page in sys.argv[1:]:
        with open(page, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = ALTERNATING.match(line.rstrip("\n"))
                if not m:
                    continue
                pair = glued(m.group(2))
                if pair:
                    bad += 1
                    print(f"{page}:{n}: {pair} render with no space between: {line.strip()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
