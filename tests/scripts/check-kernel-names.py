#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that every kernel name of docs/integration.md's tables exists.

Usage: check-kernel-names.py [--list] KERNEL [INTEGRATION_MD]

KERNEL is a Linux kernel tree: a git directory (a bare clone or a `.git`,
searched at HEAD with `git grep`) or a checked-out or unpacked source tree
(searched with `grep -r`; Debian's linux-source-X.Y package unpacks to one).
INTEGRATION_MD defaults to the docs/integration.md beside this script.
--list prints the names taken from the page, with their kind, and exits.

Opt-in, not part of `meson test`: CI has no kernel tree. Run it after
editing a kernel column, e.g.
    tests/scripts/check-kernel-names.py /usr/src/linux-source-6.12
It prints each name it cannot find, "integration.md:LINE: NAME (KIND)",
then a summary, and exits 1 if a name is missing, 2 for bad arguments.

What is checked (the rule that keeps prose and ttmsim's own names out):
only `backticked` text in a table column whose header starts with
"kernel" ("kernel", "kernel counterpart"). In each span:
  - a path (`drivers/gpu/drm/ttm/ttm_bo.c`) must be a file of the tree;
  - `name(` is a function or macro: "name(" on a code line of a .c/.h;
  - `struct name` is a struct: "struct name {" in a .c/.h;
  - `CONFIG_NAME` is a Kconfig symbol: "config NAME" in a Kconfig file;
  - a name after `->` or `.` is a member, and any other name (a constant,
    a type, an errno such as `-ERESTARTSYS`) a word: either must be a
    whole word on a code line of a .c/.h.
Skipped: the variable a member access starts from (`bo` of
`bo->resource`), what follows `=`, a call's arguments (`f(fence, ops)`),
what sits in `[...]`, and C keywords.
A code line is one that does not start with "*", "/*" or "//"; a name
only mentioned in comments is not found.
A name the page marks as newer, `NAME` followed by "(after Linux X.Y", is
checked only in a tree newer than X.Y; in an older one it is listed as
"newer than this tree", not as missing.
"""
import os
import re
import subprocess
import sys
import tempfile

KEYWORDS = {'void', 'int', 'long', 'unsigned', 'bool', 'char', 'const',
            'struct', 'return', 'sizeof', 'u32', 'u64'}
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
PATH = re.compile(r'^[\w.-]+(/[\w.-]+)+\.[ch]$|^[\w-]+\.[ch]$')


def split_cells(line):
    """The cells of a table row; a '|' inside backticks does not split."""
    cells, cur, tick = [], '', False
    for ch in line.strip().strip('|'):
        if ch == '`':
            tick = not tick
        if ch == '|' and not tick:
            cells.append(cur)
            cur = ''
        else:
            cur += ch
    cells.append(cur)
    return [c.strip() for c in cells]


def span_names(span):
    """(name, kind) pairs of one backticked span, by the rules above."""
    if PATH.match(span):
        return [(span, 'path')]
    out = []
    depth = 0
    after_eq = False
    toks = list(re.finditer(r'[A-Za-z_][A-Za-z0-9_]*|->|\S', span))
    for i, t in enumerate(toks):
        s = t.group()
        if s in '[(' and (s == '[' or i == 0 or depth or
                           not IDENT.fullmatch(toks[i - 1].group())):
            depth += 1                    # an index or a group, not a call
        elif s == '(' and i + 1 < len(toks) and toks[i + 1].group() != ')':
            depth += 1                    # a call's arguments: fence, ops
        elif s in '])' and depth:
            depth -= 1
        elif s == '=':
            after_eq = True
        if not IDENT.fullmatch(s) or depth or after_eq or s in KEYWORDS:
            continue
        prev = toks[i - 1].group() if i else ''
        nxt = toks[i + 1].group() if i + 1 < len(toks) else ''
        if nxt == '(':
            kind = 'function'
        elif prev in ('->', '.'):
            kind = 'member'
        elif nxt in ('->', '.', '['):
            continue                      # a variable: bo->, fences[i]
        elif prev == 'struct':
            kind = 'struct'
        elif s.startswith('CONFIG_'):
            kind = 'config'
        else:
            kind = 'word'
        out.append((s, kind))
    return out


def extract(md_path):
    """[(line, name, kind, after)] of every kernel column of the page;
    after is the (major, minor) a name is marked newer than, or None."""
    with open(md_path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    found = []
    cols = None
    for n, line in enumerate(lines, 1):
        if not line.startswith('|'):
            cols = None
            continue
        cells = split_cells(line)
        if cols is None:
            cols = [i for i, c in enumerate(cells)
                    if c.lower().startswith('kernel')]
            continue
        if re.fullmatch(r'[|\s:-]+', line):
            continue
        for i in cols:
            if i < len(cells):
                for m in re.finditer(r'`([^`]+)`(\s*\(after Linux '
                                     r'(\d+)\.(\d+))?', cells[i]):
                    after = (int(m.group(3)), int(m.group(4))) \
                        if m.group(2) else None
                    for name, kind in span_names(m.group(1)):
                        found.append((n, name, kind, after))
    return found


def code_line(text):
    """Whether a source line is code rather than a comment line."""
    t = text.lstrip()
    return not t.startswith(('*', '/*', '//'))


def grep_lines(kernel, is_git, words):
    """Yield (path, text) of every .c/.h/Kconfig line with one of words."""
    with tempfile.NamedTemporaryFile('w', suffix='.txt') as pats:
        pats.write(''.join(w + '\n' for w in sorted(words)))
        pats.flush()
        # -F: fixed strings are matched at once (an -E alternation of a
        # few hundred words is some twenty times slower over a kernel).
        if is_git:
            cmd = ['git', '--git-dir', kernel, 'grep', '-I', '-n', '-w',
                   '-F', '-f', pats.name, 'HEAD', '--', '*.c', '*.h',
                   '*Kconfig*']
            strip = 'HEAD:'
        else:
            cmd = ['grep', '-r', '-I', '-n', '-w', '-F', '--include=*.c',
                   '--include=*.h', '--include=Kconfig*', '-f', pats.name,
                   '.']
            strip = './'
        proc = subprocess.Popen(cmd, cwd=None if is_git else kernel,
                                stdout=subprocess.PIPE, text=True,
                                errors='replace')
        for line in proc.stdout:
            if line.startswith(strip):
                line = line[len(strip):]
            path, _, rest = line.partition(':')
            _, _, text = rest.partition(':')
            yield path, text
        if proc.wait() not in (0, 1):
            raise OSError(f'{cmd[0]} failed with status {proc.returncode}')


def find(kernel, is_git, names):
    """The subset of names (name, kind) found in the tree."""
    found = set()
    plain = {}
    for name, kind in names:
        if kind == 'path':
            if is_git:
                ok = subprocess.run(
                    ['git', '--git-dir', kernel, 'cat-file', '-e',
                     'HEAD:' + name], capture_output=True).returncode == 0
            else:
                ok = os.path.isfile(os.path.join(kernel, name))
            if ok:
                found.add((name, kind))
        else:
            word = name[len('CONFIG_'):] if kind == 'config' else name
            plain.setdefault(word, set()).add(kind)
    if not plain:
        return found
    tests = {
        'function': lambda w: re.compile(r'\b%s\s*\(' % w),
        'struct': lambda w: re.compile(r'\bstruct\s+%s\s*\{' % w),
        'config': lambda w: re.compile(r'^\s*(menu)?config\s+%s\s*$' % w),
        'member': lambda w: re.compile(r'\b%s\b' % w),
        'word': lambda w: re.compile(r'\b%s\b' % w),
    }
    todo = {(w, k): tests[k](w) for w, ks in plain.items() for k in ks}
    pending = {w: set(ks) for w, ks in plain.items()}
    for path, text in grep_lines(kernel, is_git, plain):
        if not pending:
            continue                      # drain grep's output
        kconfig = os.path.basename(path).startswith('Kconfig')
        if not kconfig and not code_line(text):
            continue
        for w in set(IDENT.findall(text)) & pending.keys():
            for k in list(pending[w]):
                if (k == 'config') == kconfig and todo[(w, k)].search(text):
                    pending[w].discard(k)
                    del todo[(w, k)]
            if not pending[w]:
                del pending[w]
    for w, ks in plain.items():
        for k in ks:
            if (w, k) not in todo:
                found.add(('CONFIG_' + w if k == 'config' else w, k))
    return found


def describe(kernel, is_git):
    """(text, (major, minor) or None) of the tree, from its Makefile."""
    try:
        if is_git:
            text = subprocess.run(['git', '--git-dir', kernel, 'show',
                                   'HEAD:Makefile'], capture_output=True,
                                  text=True, check=True).stdout
            commit = subprocess.run(['git', '--git-dir', kernel, 'rev-parse',
                                     '--short=12', 'HEAD'],
                                    capture_output=True, text=True).stdout
        else:
            with open(os.path.join(kernel, 'Makefile'),
                      encoding='utf-8') as f:
                text = f.read(4096)
            commit = ''
        head = dict(re.findall(r'^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)',
                               text, re.M))
        what = 'Linux {VERSION}.{PATCHLEVEL}.{SUBLEVEL}'.format(**head)
        if commit.strip():
            what += f' (commit {commit.strip()})'
        return what, (int(head['VERSION']), int(head['PATCHLEVEL']))
    except (OSError, KeyError, subprocess.CalledProcessError):
        return 'a tree of unknown version', None


def main(argv):
    args = argv[1:]
    listing = '--list' in args
    args = [a for a in args if a != '--list']
    here = os.path.dirname(os.path.abspath(__file__))
    md = os.path.join(here, '..', '..', 'docs', 'integration.md')
    if listing and len(args) <= 1:
        md = args[0] if args else md
        for n, name, kind, after in extract(md):
            later = f', after Linux {after[0]}.{after[1]}' if after else ''
            print(f'{n}: {name} ({kind}{later})')
        return 0
    if len(args) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    kernel = args[0]
    if len(args) == 2:
        md = args[1]
    if not os.path.isdir(kernel):
        print(f'{kernel}: not a directory (a kernel tree or git dir)',
              file=sys.stderr)
        return 2
    is_git = subprocess.run(
        ['git', '--git-dir', kernel, 'rev-parse', '--verify', '-q',
         'HEAD^{commit}'], capture_output=True).returncode == 0
    if not is_git and not os.path.isfile(
            os.path.join(kernel, 'include', 'linux', 'kernel.h')):
        print(f'{kernel}: neither a git directory nor a kernel source tree '
              '(no include/linux/kernel.h)', file=sys.stderr)
        return 2
    uses = extract(md)
    if not uses:
        print(f'{md}: no backticked name in a "kernel" column',
              file=sys.stderr)
        return 1
    what, version = describe(kernel, is_git)
    names = {(name, kind) for _, name, kind, _ in uses}
    found = find(kernel, is_git, names)
    reported = set()
    newer = set()
    for n, name, kind, after in uses:
        if (name, kind) in found:
            continue
        where = f'{os.path.basename(md)}:{n}: {name} ({kind})'
        if after and (version is None or version <= after):
            print(f'{where}: newer than this tree (after Linux '
                  f'{after[0]}.{after[1]})')
            newer.add((name, kind))
        else:
            print(where)
            reported.add((name, kind))
    print(f'{len(names)} kernel names ({len(uses)} uses) checked against '
          f'{what}: {len(reported)} not found'
          + (f', {len(newer)} newer than it' if newer else ''))
    return 1 if reported else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
