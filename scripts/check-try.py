#!/usr/bin/env python3
"""Checks that every `try?` in Sources/ says why its error does not matter there: a comment on
the same line or on the line above. An error dropped without a reason is how a failure goes
unnoticed (a stat error once deleted notes and ratings); the others handle their errors.

Usage: scripts/check-try.py [PACKAGE_DIR]; prints each unexplained `try?` and exits 1.
"""
import os, re, sys

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
            above = lines[i - 1].strip() if i > 0 else ''
            if '//' in line or above.startswith('//'):
                continue
            problems.append(f'{os.path.relpath(path, root)}:{i + 1}: try? without a comment saying why its error does not matter')
for p in problems:
    print(p, file=sys.stderr)
if problems:
    print(f'check-try: {len(problems)} of {count} try? unexplained; handle the error, or say why it does not matter', file=sys.stderr)
    sys.exit(1)
print(f'check-try: every one of {count} try? says why its error does not matter')
