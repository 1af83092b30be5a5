#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the mapping table of docs/integration.md against ttmsim.sym.

Usage: check-integration.py TTMSIM_SYM INTEGRATION_MD

Every exported function (one name a line in ttmsim.sym) must be the first
cell of a row of the mapping table, `| `name` | kernel | difference |`,
and every name in a first cell must be exported. The table is the rows
after the heading "## Mapping to the kernel" (to the end of the file).
Exit 1, naming each missing or unknown name, if either fails.
"""
import re
import sys

HEADING = '## Mapping to the kernel'


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding='utf-8') as f:
        symbols = {line.strip() for line in f
                   if line.strip() and not line.startswith('#')}
    with open(argv[2], encoding='utf-8') as f:
        text = f.read()
    start = text.find(HEADING + '\n')
    if start < 0:
        print(f'{argv[2]}: no "{HEADING}" section', file=sys.stderr)
        return 1
    named = {}
    row = re.compile(r'^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|')
    for n, line in enumerate(text[start:].splitlines(), 1):
        m = row.match(line)
        if m:
            named.setdefault(m.group(1), n)
    ok = True
    for name in sorted(symbols - named.keys()):
        print(f'missing from the table: {name}', file=sys.stderr)
        ok = False
    for name in sorted(named.keys() - symbols):
        print(f'not in ttmsim.sym: {name}', file=sys.stderr)
        ok = False
    if ok:
        print(f'{len(symbols)} exported functions, all in the table')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
