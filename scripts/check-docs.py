#!/usr/bin/env python3
"""Every public declaration in Sources/ says what it is for in a `///` comment (attributes such
as @discardableResult may stand between). Run before each build, like check-try.py.

  check-docs.py            the declarations without one, and exit 1 if any
  check-docs.py --count    the figures only: public declarations, and how many lack `///`
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|open)\s+)(?:(?:static|final|class|override|mutating|nonmutating|nonisolated|indirect|convenience|required|private\(set\)|fileprivate\(set\)|internal\(set\)|package\(set\))\s+)*"
    r"(func|var|let|init|struct|class|enum|protocol|typealias|actor|subscript|extension|case)\b")


def missing(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    found, total = [], 0
    for i, line in enumerate(lines):
        m = DECLARATION.match(line)
        if not m or m.group(1) == "extension":
            continue
        total += 1
        j = i - 1
        while j >= 0 and re.match(r"^\s*@\w+", lines[j]) and not lines[j].strip().startswith("///"):
            j -= 1
        if j < 0 or not lines[j].strip().startswith("///"):
            found.append((i + 1, line.strip()))
    return total, found


def main(argv):
    total, lacking = 0, []
    for path in sorted(glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True)):
        t, found = missing(path)
        total += t
        lacking += [(os.path.relpath(path, ROOT), n, text) for n, text in found]
    if argv[:1] == ["--count"]:
        print(f"{total} public declarations, {len(lacking)} without ///")
        return 0
    if lacking:
        for where, n, text in lacking:
            print(f"{where}:{n}: public declaration without ///: {text}", file=sys.stderr)
        print(f"check-docs: {len(lacking)} of {total} public declarations have no /// comment", file=sys.stderr)
        return 1
    print(f"check-docs: every one of {total} public declarations has a /// comment")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
