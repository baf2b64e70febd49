#!/usr/bin/env python3
"""Checks that every `try?` in Sources/ says why its error does not matter there: a comment on
a line of its statement (the formatter may break one over several lines) or on the line above it. An error dropped without a reason is how a failure goes
unnoticed (a stat error once deleted notes and ratings); the others handle their errors.

Usage: scripts/check-try.py [PACKAGE_DIR]; prints each unexplained `try?` and exits 1.
"""
import os, re, sys

CONTINUES_AFTER = ('(', ',', '=', '?', ':', '[', '&&', '||', 'guard', 'if', 'let')
CONTINUES_BEFORE = ('?', ':', '.', ')', ']', '&&', '||', 'else')


def code_of(line):
    return line.split('//')[0].strip()


def statement(lines, i):
    """The lines of the statement that holds line i: up while a line is continued by the next,
    down while brackets opened in it are open or the next line continues it."""
    first = i
    while first > 0 and (code_of(lines[first - 1]).endswith(CONTINUES_AFTER)
                         or code_of(lines[first]).startswith(CONTINUES_BEFORE)) and code_of(lines[first - 1]):
        first -= 1
    last, depth = i, 0
    while True:
        code = code_of(lines[last])
        depth += code.count('(') + code.count('[') - code.count(')') - code.count(']')
        nxt = code_of(lines[last + 1]) if last + 1 < len(lines) else ''
        if last + 1 < len(lines) and (depth > 0 or code.endswith(CONTINUES_AFTER) or nxt.startswith(CONTINUES_BEFORE)):
            last += 1
            continue
        return first, last


root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
problems = []
count = 0
for base, _, names in sorted(os.walk(os.path.join(root, 'Sources'))):
    for name in sorted(names):
        if not name.endswith('.swift'):
            continue
        path = os.path.join(base, name)
        lines = open(path, encoding='utf-8').read().split('\n')
        for i, line in enumerate(lines):
            code = line.split('//')[0]
            if 'try?' not in code:
                continue
            count += 1
            first, last = statement(lines, i)
            above = lines[first - 1].strip() if first > 0 else ''
            if any('//' in lines[k] for k in range(first, last + 1)) or above.startswith('//'):
                continue
            problems.append(f'{os.path.relpath(path, root)}:{i + 1}: try? without a comment saying why its error does not matter')
for p in problems:
    print(p, file=sys.stderr)
if problems:
    print(f'check-try: {len(problems)} of {count} try? unexplained; handle the error, or say why it does not matter', file=sys.stderr)
    sys.exit(1)
print(f'check-try: every one of {count} try? says why its error does not matter')
