#!/usr/bin/env python3
"""The tests by their tags (Sources/PTKTestTags): regular expressions for `swift test --filter`
and `--skip`, and a check that every suite says what kind it is.

  tests-tagged.py --check             every @Suite is tagged .unit or .endToEnd, as its target
                                      is (EndToEndTests: .endToEnd; the others: .unit), and every
                                      @Test sits in a tagged suite
  tests-tagged.py --filter unit       a --filter expression: the suites tagged unit
  tests-tagged.py --skip slow root    a --skip expression: the suites and tests tagged slow or root

Swift Testing's command line filters by test ID, not by tag; this turns tags into IDs
("Target.Suite" and "Target.Suite/test(") read from the sources.
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
KINDS = {"unit", "endToEnd"}


def attribute_end(text, start):
    """The index after the parenthesised arguments opening at text[start] == '(' (strings skipped)."""
    depth, i, quoted = 0, start, False
    while i < len(text):
        c = text[i]
        if not quoted and text.startswith('#"', i):
            i = text.index('"#', i + 2) + 2
            continue
        if quoted:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced attribute")


def tags_in(arguments):
    found = set()
    for group in re.findall(r"\.tags\(([^)]*)\)", arguments):
        found |= set(re.findall(r"\.(\w+)", group))
    return found


def declarations():
    """Each test file's @Suite and @Test attributes and extensions, in order:
    (where, target, kind, name, tags, line, indented)."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "Tests", "*", "*.swift"))):
        target = path.split(os.sep)[-2]
        text = open(path, encoding="utf-8").read()
        where = os.path.relpath(path, ROOT)
        for m in re.finditer(r"@(Suite|Test)\b|^extension (\w+)", text, re.M):
            line = text.count("\n", 0, m.start()) + 1
            if m.group(2):
                found.append((where, target, "extension", m.group(2), set(), line, False))
                continue
            end = m.end()
            arguments = ""
            if end < len(text) and text[end] == "(":
                close = attribute_end(text, end)
                arguments, end = text[end:close], close
            rest = text[end:end + 400]
            if m.group(1) == "Suite":
                d = re.match(r"\s*(?:@\w+\s+)*(?:(?:final|public|private|fileprivate|internal)\s+)*(?:struct|class|enum|actor)\s+(\w+)", rest)
            else:
                d = re.match(r"\s*(?:@\w+\s+)*(?:(?:static|public|private|fileprivate|internal|mutating|nonisolated)\s+)*func\s+(\w+)", rest)
            start = text.rfind("\n", 0, m.start()) + 1
            found.append((where, target, m.group(1), d.group(1) if d else None, tags_in(arguments), line, start < m.start()))
    return found


def scan():
    """[(target, suite, tags, [(test, tags)])] and [problems]."""
    found = declarations()
    suites, problems = [], []
    byname = {}
    for where, target, kind, name, tags, line, _ in found:
        if kind == "Suite":
            if name is None:
                problems.append(f"{where}:{line}: a @Suite not followed by a type")
                continue
            byname[(target, name)] = (target, name, tags, [])
            suites.append(byname[(target, name)])
    current = None
    for where, target, kind, name, tags, line, indented in found:
        if kind == "extension":
            # An extension of a suite (perhaps declared in another file of the target) goes on with it.
            current = byname.get((target, name))
        elif kind == "Suite":
            current = byname.get((target, name))
        elif name is None:
            problems.append(f"{where}:{line}: a @Test not followed by a func")
        elif current is None or current[0] != target or not indented:
            problems.append(f"{where}:{line}: @Test func {name} is not in a tagged @Suite")
        else:
            current[3].append((name, tags))
    for target, suite, tags, _ in suites:
        want = "endToEnd" if target == "EndToEndTests" else "unit"
        if tags & KINDS != {want}:
            problems.append(f"Tests/{target}: suite {suite} is tagged {sorted(tags & KINDS) or 'with no kind'}; it must be .{want}")
    return suites, problems


def expression(ids):
    return "^(" + "|".join(ids) + ")" if ids else "^$ never"


def main(argv):
    suites, problems = scan()
    if argv[:1] == ["--check"]:
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        tests = sum(len(s[3]) for s in suites)
        print(f"tests-tagged: {len(suites)} suites and {tests} tests, every suite .unit or .endToEnd as its target is")
        return 0
    if len(argv) >= 2 and argv[0] in ("--filter", "--skip"):
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        wanted = set(argv[1:])
        ids = []
        for target, suite, tags, tests in suites:
            if tags & wanted:
                ids.append(re.escape(f"{target}.{suite}") + "(/|$)")
            else:
                ids += [re.escape(f"{target}.{suite}/{name}(") for name, t in tests if t & wanted]
        print(expression(ids))
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
