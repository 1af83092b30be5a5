#!/usr/bin/env python3
"""Check that the C lines model/ww.pml (and README.md) cite still say what
the model claims: a citation `FILE.c:N` or `FILE.c:N-M` must be followed,
before the next citation on the line, by at least one token in backticks,
and every such token must appear on the cited lines of ww/FILE.c. A line
that moves makes the check fail, so the numbers cannot go stale silently.

    check-citations.py WW_DIR FILE...
"""
import re
import sys

CITE = re.compile(r'\b(\w+\.c):(\d+)(?:-(\d+))?')
TOKEN = re.compile(r'`([^`]+)`')


def main(argv):
    if len(argv) < 3:
        print(f'usage: {argv[0]} WW_DIR FILE...', file=sys.stderr)
        return 2
    src_dir, files = argv[1], argv[2:]
    sources = {}
    bad = checked = 0
    for path in files:
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        for lineno, line in enumerate(lines, 1):
            cites = list(CITE.finditer(line))
            for i, m in enumerate(cites):
                where = f'{path}:{lineno}: {m.group(0)}'
                end = cites[i + 1].start() if i + 1 < len(cites) else len(line)
                tokens = TOKEN.findall(line[m.end():end])
                name = m.group(1)
                first = int(m.group(2))
                last = int(m.group(3) or first)
                if name not in sources:
                    try:
                        with open(f'{src_dir}/{name}', encoding='utf-8') as f:
                            sources[name] = f.read().split('\n')
                    except OSError as e:
                        print(f'{where}: cannot read {src_dir}/{name}: {e}')
                        bad += 1
                        continue
                src = sources[name]
                checked += 1
                if not tokens:
                    print(f'{where}: no `token` names what the line holds')
                    bad += 1
                    continue
                if not 1 <= first <= last <= len(src):
                    print(f'{where}: {name} has {len(src)} lines')
                    bad += 1
                    continue
                text = '\n'.join(src[first - 1:last])
                for t in tokens:
                    if t not in text:
                        print(f'{where}: `{t}` is not on {name}:{first}-{last}'
                              f' (now: {text.strip()!r})')
                        bad += 1
    if checked == 0:
        print('no citations found: wrong files?')
        return 1
    print(f'{checked} citations checked, {bad} wrong')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
