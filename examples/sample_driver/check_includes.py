#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The sample driver uses the public API only: every #include of its
sources is a system header, libdrm's, an installed <ttmsim/...> header,
or one of its own "sdrv*.h". Usage: check_includes.py FILE..."""
import re
import sys

INCLUDE = re.compile(r'\s*#\s*include')
ALLOWED = re.compile(r'\s*#\s*include\s+(<ttmsim/[a-z_]+\.h>|<drm\.h>|'
                     r'<[a-z/]+\.h>|"sdrv[a-z_]*\.h")')
PRIVATE = re.compile(r'<(util|bo|ww|drm|sched|execbuf|gpu_sim)/')
bad = 0
for path in sys.argv[1:]:
    for n, line in enumerate(open(path), 1):
        if not INCLUDE.match(line):
            continue
        if not ALLOWED.match(line) or PRIVATE.search(line):
            print(f'{path}:{n}: not a public header: {line.strip()}')
            bad += 1
sys.exit(1 if bad else 0)
