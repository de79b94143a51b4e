#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The glue's files are layers (AGENTS.md): each calls only functions of
the files before it in the list at the top of src/internal.h. Reads the
list and the sources, prints every call that goes up or across to a later
file, and exits 1 if there is one (0 otherwise)."""
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), '..', 'src')
header = open(os.path.join(src, 'internal.h')).read()
top = header[:header.index('#ifndef')]  # the comments before the guard
order = re.findall(r'^ \*\s+(\w+\.c)\s', top, re.M)
on_disk = sorted(f for f in os.listdir(src) if f.endswith('.c'))
if sorted(order) != on_disk:
    print('internal.h lists %s; src/ has %s' % (order, on_disk))
    sys.exit(1)

text = {f: re.sub(r'/\*.*?\*/', '', open(os.path.join(src, f)).read(),
                  flags=re.S) for f in order}
# Functions with external linkage, defined at the start of a line.
defined = {}
for f in order:
    for m in re.finditer(r'^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\([^;]*?\)\s*\{',
                         text[f], re.M | re.S):
        defined[m.group(1)] = f

bad = []
for i, f in enumerate(order):
    for name, home in defined.items():
        if home != f and order.index(home) > i and \
                re.search(r'\b%s\s*\(' % name, text[f]):
            bad.append('%s calls %s() of %s, a later layer' % (f, name, home))
for line in bad:
    print(line)
print('%d files, %d functions, %d calls against the layer order'
      % (len(order), len(defined), len(bad)))
sys.exit(1 if bad else 0)
