#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compile every C example of README.md and of the public headers.

Usage: check-examples.py README INCLUDE_DIR -- CC [CC ARGS...]

The examples, and the one wrapping rule:
  - README: every ```c fenced block is a complete translation unit,
    compiled as it is.
  - Headers (INCLUDE_DIR/ttmsim/*.h): in the comment that opens each file,
    every run of lines indented by a tab after " *" (blank " *" lines
    inside a run belong to it) is an example made of complete top-level
    definitions; it is compiled after one line, #include of its own
    header ("ttmsim/exec.h" for include/ttmsim/exec.h).
Indented blocks elsewhere (kernel-doc continuation lines) are not code.

Each example is compiled on its own with
  CC -std=c11 -Wall -Wextra -Werror -Wno-unused-function -fsyntax-only
     -I INCLUDE_DIR
(c11, as the library itself, which shows that the exec loop's GNU
extension needs no -std=gnu*; unused static functions are allowed so that
an example needs no caller). Prints each example's source and the
compiler's messages when it fails; exits 1 if any failed, or if there are
no examples at all. Python 3 stdlib only.
"""
import os
import re
import subprocess
import sys
import tempfile

FLAGS = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-Wno-unused-function',
         '-fsyntax-only']


def readme_examples(path):
    """(name, first line, source) of each ```c block of @path."""
    out, block, start = [], None, 0
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if block is None:
                if re.match(r'^```c\s*$', line):
                    block, start = [], n + 1
            elif line.startswith('```'):
                out.append((os.path.basename(path), start, ''.join(block)))
                block = None
            else:
                block.append(line)
    return out


def header_examples(path, include):
    """(name, first line, source) of each example of @path's first
    comment."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    # The first comment of more than one line (after the SPDX line).
    m = re.search(r'/\*(?!\*)(?:(?!\*/).)*?\n.*?\*/', text, re.S)
    if not m:
        return []
    first = text.count('\n', 0, m.start()) + 1
    rel = os.path.relpath(path, include)
    runs, run, blank = [], None, 0
    for k, line in enumerate(m.group(0).split('\n')):
        if line.startswith(' *\t'):
            if run is None:
                run = (first + k, [])
                runs.append(run)
            run[1].extend([''] * blank + [line[3:]])
            blank = 0
        elif line.rstrip() == ' *' and run is not None:
            blank += 1
        else:
            run, blank = None, 0
    return [(rel, start, f'#include "{rel}"\n' + '\n'.join(lines) + '\n')
            for start, lines in runs]


def main(argv):
    if '--' not in argv or argv.index('--') != 3 or len(argv) < 5:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    readme, include = argv[1], argv[2]
    cc = argv[4:]
    examples = readme_examples(readme)
    hdr_dir = os.path.join(include, 'ttmsim')
    for fn in sorted(os.listdir(hdr_dir)):
        if fn.endswith('.h'):
            examples += header_examples(os.path.join(hdr_dir, fn), include)
    if not examples:
        print('no examples found: the extraction is broken')
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, line, src) in enumerate(examples):
            path = os.path.join(tmp, f'example{k}.c')
            with open(path, 'w', encoding='utf-8') as f:
                f.write(src)
            res = subprocess.run(cc + FLAGS + ['-I', include, path],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
            if res.returncode == 0:
                print(f'ok: {name}:{line}')
                continue
            failed += 1
            print(f'FAILED: {name}:{line}: the example does not compile')
            for n, ln in enumerate(src.split('\n'), 1):
                print(f'  {n:3} | {ln}')
            print(res.stdout.replace(path, f'{name}:{line}(example)'))
    print(f'{len(examples)} examples, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
