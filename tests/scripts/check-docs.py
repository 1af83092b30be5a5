#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the kernel-doc of the public headers against the exported symbols.

Usage: check-docs.py SYMBOL_FILE HEADER_DIR

Reads the symbols of SYMBOL_FILE (ttmsim.sym) and every *.h of HEADER_DIR
(include/ttmsim). Prints one line per problem, "header:line: name: what",
then a summary; exits 1 if there was a problem. Python 3 stdlib only.

The rules (Documentation/doc-guide/kernel-doc.rst, one grammar):

Functions: every symbol of SYMBOL_FILE, and every static inline function
of the headers whose name does not end in "_" (those are private helpers),
is declared in a header right below a block

    /**
     * name() - summary          (or "name - summary")
     * @param: text              one per parameter, right after the summary
     *
     * Description.
     * Context: may it sleep; locks it needs, takes, releases.
     * Return: what it returns.  (non-void functions only)
     */

with exactly the prototype's parameters, "Context:" and "Return:" at the
start of a line, Context before Return, and no "Locking:" section (the
kernel's legacy spelling of Context).

The Context: grammar: sentences in this order, each optional but the first:
  "May sleep." or "Does not sleep." (sleeping: waiting for a lock, a
      fence, another thread or the GPU; the short internal mutexes of
      ttmsim, never held across a wait, do not count), with a qualifier
      if needed ("May sleep, interruptibly.", "May sleep unless ...").
  the locks the caller must hold: "@bo reserved by the caller.",
      "@resv held."; or must not: "No reservation of ... held."
  the locks it takes, releases, or takes and releases: "Takes @lock on
      success.", "Releases every reservation @exec holds.", "Takes and
      releases the device lock."
  other rules: which thread, callbacks it runs, where not to call it.
Only the first sentence is checked here.

Call-site twins: a symbol NAME_at is the twin of NAME (ttmsim/ww_mutex.h).
It needs no block of its own: NAME's block documents it, and the comment
above the twins documents @file and @line once for all of them. NAME must
be exported too, and NAME_at must take NAME's parameters, then file, line.

Every function declared in a header is exported (or static inline).

Other kernel-doc blocks: a top-level "/**" comment must be a full block
(kernel-doc ignores one-line ones) naming the declaration right below it:
"name() - " for a function or function-like macro, "struct|union|enum|
typedef name - ", "define NAME - " for an object-like macro, or "DOC:".
A documented function-like macro or function typedef has exactly its
parameters as @lines (a typedef also needs Context:).

Structs and enums: each one defined in a header has a block, and every
member (enum value) has an @member: line there or an inline member block
(/** @member: text */) in the body, except those after a "/* private: */"
marker (up to a "/* public: */"): fields that are visible only so that
callers can allocate the struct.
"""
import os
import re
import sys

SECTION = re.compile(r'^(Context|Returns?|Locking|Description|Notes?|'
                     r'Examples?)\s*:', re.I)
CONTEXT = re.compile(r'^(May sleep|Does not sleep)\b')
MIDLINE = re.compile(r'\S.*?\b(Context|Return|Locking):')
PARAM = re.compile(r'^@(\w+|\.\.\.)\s*:')
HEADER = re.compile(r'^(?:(struct|union|enum|typedef|define)\s+)?'
                    r'(\w+)(\(\))?\s+-\s+\S')
IDENT = re.compile(r'[A-Za-z_]\w*')
KEYWORDS = {'const', 'volatile', 'restrict', 'struct', 'union', 'enum',
            'unsigned', 'signed', 'int', 'long', 'short', 'char', 'void',
            'bool', 'float', 'double', 'static', 'inline', 'extern'}


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, path, line, name, what):
        self.lines.append(f'{path}:{line}: {name}: {what}')


def mask(text, spans):
    """@text with each (start, end) span blanked, newlines kept."""
    out = list(text)
    for start, end in spans:
        for i in range(start, end):
            if out[i] != '\n':
                out[i] = ' '
    return ''.join(out)


def preprocessor_spans(text):
    """Spans of preprocessor lines (with continuations), and of
    "#ifdef __cplusplus ... #endif" blocks (the extern "C" braces)."""
    spans = []
    for m in re.finditer(r'^#ifdef __cplusplus\n.*?^#endif[^\n]*',
                         text, re.M | re.S):
        spans.append((m.start(), m.end()))
    for m in re.finditer(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', text, re.M):
        spans.append((m.start(), m.end()))
    return spans


def split_top(s, sep):
    """Split @s at @sep characters outside (), [] and {}."""
    parts, depth, cur = [], 0, ''
    for c in s:
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += c
    parts.append(cur)
    return parts


def declarator_name(decl):
    """The name a declarator declares: "(*name)(...)", "name[N]", "*name",
    "name : 3"; None for an unnamed one."""
    m = re.search(r'\(\s*\*\s*(\w+)\s*\)', decl)
    if m:
        return m.group(1)
    decl = re.sub(r'\[.*?\]', '', decl)
    decl = re.sub(r':\s*\w+\s*$', '', decl)
    names = [n for n in IDENT.findall(decl) if n not in KEYWORDS]
    return names[-1] if names else None


def parse_params(plist):
    plist = plist.strip()
    if plist in ('', 'void'):
        return []
    names = []
    for p in split_top(plist, ','):
        p = p.strip()
        if p == '...':
            names.append('...')
            continue
        # A parameter without a name ("int") names only a type: None.
        unnamed = len(IDENT.findall(p)) < 2 and '(' not in p
        names.append(None if unnamed else declarator_name(p))
    return names


class Decl:
    """One top-level declaration: kind, name, line, params, body."""

    def __init__(self, kind, name, line, start, **kw):
        self.kind = kind
        self.name = name
        self.line = line
        self.start = start
        self.params = kw.get('params', [])
        self.returns_void = kw.get('returns_void', False)
        self.body = kw.get('body')  # (start, end) offsets of { ... }


def line_of(text, pos):
    return text.count('\n', 0, pos) + 1


def parse_decls(text, masked):
    """Top-level declarations of @masked (comments and preprocessor
    blanked), with their offsets in the original @text."""
    decls = []
    i, n = 0, len(masked)
    while i < n:
        if masked[i].isspace():
            i += 1
            continue
        start, depth, body = i, 0, None
        while i < n:
            c = masked[i]
            if c == '{':
                if depth == 0 and body is None:
                    body = [i, None]
                depth += 1
            elif c == '}':
                depth -= 1
                if depth == 0 and body is not None and body[1] is None:
                    body[1] = i + 1
                    # A function body ends the declaration; a struct's
                    # is followed by ";".
                    if re.search(r'\)\s*$', masked[start:body[0]]):
                        i += 1
                        break
            elif c == ';' and depth == 0:
                i += 1
                break
            i += 1
        head = masked[start:body[0]] if body else masked[start:i]
        head = ' '.join(head.split())
        line = line_of(text, start)
        d = classify(head, line, start, body)
        if d:
            decls.append(d)
    return decls


def classify(head, line, start, body):
    head = head.rstrip(';').strip()
    m = re.match(r'^(?:typedef\s+)?(struct|union|enum)\s+(\w+)\s*$', head)
    if m and body:
        return Decl(m.group(1), m.group(2), line, start, body=tuple(body))
    if head.startswith('typedef'):
        m = re.match(r'^typedef\s+(.*?)\b(\w+)\s*\((.*)\)$', head)
        if m and '(*' not in m.group(1):
            return Decl('typedef', m.group(2), line, start,
                        params=parse_params(m.group(3)))
        m = re.search(r'\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$', head)
        if m:
            return Decl('typedef', m.group(1), line, start,
                        params=parse_params(m.group(2)))
        return Decl('typedef', declarator_name(head), line, start)
    # A function: the identifier before the first top-level "(".
    m = re.match(r'^(.*?)\b(\w+)\s*\((.*)\)\s*$', head)
    if m and m.group(1).strip():
        ret = m.group(1).strip()
        kind = 'inline' if re.search(r'\bstatic\b', ret) else 'function'
        ret = re.sub(r'\b(static|inline|extern)\b', '', ret).strip()
        return Decl(kind, m.group(2), line, start,
                    params=parse_params(m.group(3)),
                    returns_void=(ret == 'void'), body=body)
    return None


class Block:
    """A /** ... */ comment: its lines without the comment leaders."""

    def __init__(self, text, start, end, line):
        self.start, self.end, self.line = start, end, line
        raw = text[start + 3:end - 2].split('\n')
        self.oneline = len(raw) == 1
        # kernel-doc reads a block only if "/**" is alone on its line.
        self.first_empty = self.oneline or not raw[0].strip()
        self.lines = [re.sub(r'^\s*\* ?', '', ln).rstrip()
                      for ln in raw[1:]]
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()

    def header(self):
        return self.lines[0] if self.lines else ''

    def params(self):
        """{name: line} of the @name: lines of the header paragraph, and
        the names of @lines found after it."""
        inside, outside = {}, []
        para = True
        for k, ln in enumerate(self.lines):
            s = ln.strip()
            if k > 0 and not s:
                para = False
            m = PARAM.match(s)
            if m:
                if para:
                    inside[m.group(1)] = self.line + 1 + k
                else:
                    outside.append(m.group(1))
        return inside, outside

    def sections(self):
        found = []
        for ln in self.lines[1:]:
            m = SECTION.match(ln.strip())
            if m:
                found.append(m.group(1).capitalize().rstrip('s')
                             if m.group(1).lower().startswith('return')
                             else m.group(1).capitalize())
        return found

    def context(self):
        """The text of the Context: section, or None."""
        for k, ln in enumerate(self.lines[1:], 1):
            m = re.match(r'^Context\s*:\s*(.*)', ln.strip(), re.I)
            if m:
                text = [m.group(1)]
                for nxt in self.lines[k + 1:]:
                    if not nxt.strip() or SECTION.match(nxt.strip()):
                        break
                    text.append(nxt.strip())
                return ' '.join(text)
        return None

    def midline_sections(self):
        return [m.group(1) for ln in self.lines[1:]
                for m in [MIDLINE.match(ln.strip())] if m
                and not PARAM.match(ln.strip())]


def member_names(text, masked, body, kind):
    """(name, offset) of each member or enum value in @body."""
    start, end = body
    inner = masked[start + 1:end - 1]
    names, pos = [], start + 1
    sep = ',' if kind == 'enum' else ';'
    for part in split_top(inner, sep):
        off = pos + (len(part) - len(part.lstrip()))
        pos += len(part) + 1
        part = ' '.join(part.split())
        if not part:
            continue
        if kind == 'enum':
            m = IDENT.match(part)
            if m:
                names.append((m.group(0), off))
            continue
        # "unsigned int num_bos, max_bos": the type is in the first.
        for piece in split_top(part, ','):
            nm = declarator_name(piece)
            if nm:
                names.append((nm, off))
    return names


def private_ranges(text, body):
    """Offsets inside @body that are private (after "/* private: */")."""
    start, end = body
    marks = [(m.start(), m.group(1))
             for m in re.finditer(r'/\*\s*(private|public)\s*:\s*\*/',
                                  text[start:end])]
    ranges, cur = [], None
    for off, what in marks:
        if what == 'private' and cur is None:
            cur = start + off
        elif what == 'public' and cur is not None:
            ranges.append((cur, start + off))
            cur = None
    if cur is not None:
        ranges.append((cur, end))
    return ranges


def inline_member_docs(text, body):
    docs = set()
    start, end = body
    for m in re.finditer(r'/\*\*(.*?)\*/', text[start:end], re.S):
        for pm in re.finditer(r'(?:^|\n)\s*\*?\s*@(\w+)\s*:', m.group(1)):
            docs.add(pm.group(1))
    return docs


class Header:
    def __init__(self, path, display):
        self.path, self.display = path, display
        with open(path, encoding='utf-8') as f:
            self.text = f.read()
        comments = [(m.start(), m.end()) for m in
                    re.finditer(r'/\*.*?\*/', self.text, re.S)]
        nocomment = mask(self.text, comments)
        self.masked = mask(nocomment, preprocessor_spans(nocomment))
        self.decls = parse_decls(self.text, self.masked)
        bodies = [d.body for d in self.decls if d.body]
        self.blocks = []
        for s, e in comments:
            if not self.text.startswith('/**', s) or \
                    self.text.startswith('/**/', s):
                continue
            if any(b[0] < s < b[1] for b in bodies):
                continue  # an inline member block
            self.blocks.append(Block(self.text, s, e,
                                     line_of(self.text, s)))
        self.by_start = {d.start: d for d in self.decls}

    def target(self, block):
        """What follows @block: a Decl, ('define', name, params|None), or
        None."""
        m = re.compile(r'\s*').match(self.text, block.end)
        pos = m.end()
        d = self.by_start.get(pos)
        if d:
            return d
        m = re.compile(r'#\s*define\s+(\w+)(\(([^)]*)\))?').match(
            self.text, pos)
        if m:
            params = None
            if m.group(2) is not None:
                params = [p.strip() for p in m.group(3).split(',')
                          if p.strip()]
            return ('define', m.group(1), params)
        return None


def check_params(p, h, block, name, params):
    inside, outside = block.params()
    for nm in outside:
        p.add(h.display, block.line, name,
              f'@{nm}: is not right after the summary line')
    documented = 0
    for prm in params:
        if prm is None:
            p.add(h.display, block.line, name, 'a parameter has no name')
        elif prm in inside:
            documented += 1
        else:
            p.add(h.display, block.line, name, f'no @{prm}: line')
    for nm, ln in inside.items():
        if nm not in params:
            p.add(h.display, ln, name, f'@{nm}: is not a parameter')
    return documented


def check_sections(p, h, block, name, need_return, forbid_return=False):
    secs = block.sections()
    for what in block.midline_sections():
        p.add(h.display, block.line, name,
              f'"{what}:" inside a paragraph: start a line with it')
    if 'Locking' in secs:
        p.add(h.display, block.line, name,
              '"Locking:" section: write it as "Context:"')
    if 'Context' not in secs:
        p.add(h.display, block.line, name, 'no Context: section')
    elif not CONTEXT.match(block.context()):
        p.add(h.display, block.line, name,
              'Context: does not start with "May sleep" or "Does not sleep"')
    if need_return and 'Return' not in secs:
        p.add(h.display, block.line, name, 'no Return: section')
    if forbid_return and 'Return' in secs:
        p.add(h.display, block.line, name, 'Return: on a void function')
    if 'Context' in secs and 'Return' in secs and \
            secs.index('Return') < secs.index('Context'):
        p.add(h.display, block.line, name, 'Return: before Context:')
    return 'Context' in secs, 'Return' in secs


def check_block_header(p, h, block):
    """The block's (kind, name) from its first line, or None."""
    if block.oneline or not block.first_empty:
        p.add(h.display, block.line, '/**',
              'one-line or malformed kernel-doc block (kernel-doc reads '
              'only "/**" alone on its line): use /* */ or a full block')
        return None
    hdr = block.header().strip()
    if hdr.startswith('DOC:'):
        return ('DOC', None)
    m = HEADER.match(hdr)
    if not m:
        p.add(h.display, block.line, '/**',
              f'first line "{hdr[:40]}" is not "name - summary"')
        return None
    return (m.group(1) or 'function', m.group(2))


def main(argv):
    if len(argv) != 3:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    sym_path, hdr_dir = argv[1], argv[2]
    with open(sym_path, encoding='utf-8') as f:
        symbols = [ln.strip() for ln in f
                   if ln.strip() and not ln.startswith('#')]
    prefix = os.path.join(os.path.basename(os.path.dirname(
        os.path.abspath(hdr_dir))), os.path.basename(os.path.abspath(hdr_dir)))
    headers = [Header(os.path.join(hdr_dir, fn), os.path.join(prefix, fn))
               for fn in sorted(os.listdir(hdr_dir)) if fn.endswith('.h')]
    p = Problems()
    stats = dict(functions=0, params=0, documented=0, context=0,
                 nonvoid=0, returns=0, structs=0, members=0)

    # Declarations and the blocks above them.
    protos, doc_of = {}, {}
    for h in headers:
        for d in h.decls:
            if d.kind in ('function', 'inline'):
                protos.setdefault(d.name, (h, d))
        for block in h.blocks:
            kn = check_block_header(p, h, block)
            if not kn or kn[0] == 'DOC':
                continue
            kind, name = kn
            tgt = h.target(block)
            if tgt is None:
                p.add(h.display, block.line, name,
                      'block not followed by what it documents')
                continue
            if isinstance(tgt, tuple):
                tkind, tname, tparams = tgt
                want = 'define' if tparams is None else 'function'
                if tname != name or kind != want:
                    p.add(h.display, block.line, name,
                          f'block names {kind} {name} but documents '
                          f'macro {tname}')
                elif tparams is not None:
                    check_params(p, h, block, name, tparams)
                continue
            want = {'inline': 'function'}.get(tgt.kind, tgt.kind)
            if tgt.name != name or kind != want:
                p.add(h.display, block.line, name,
                      f'block names {kind} {name} but documents '
                      f'{tgt.kind} {tgt.name}')
                continue
            doc_of[(h.display, tgt.start)] = block
            if tgt.kind == 'typedef' and tgt.params:
                check_params(p, h, block, name, tgt.params)
                check_sections(p, h, block, name, False)

    # Exported functions and the public inline ones.
    exported = set(symbols)
    api = [s for s in symbols if not s.endswith('_at')]
    for h in headers:
        for d in h.decls:
            if d.kind == 'inline' and not d.name.endswith('_') and \
                    d.name not in api:
                api.append(d.name)
            if d.kind == 'function' and d.name not in exported:
                p.add(h.display, d.line, d.name,
                      f'declared but not in {os.path.basename(sym_path)}')
    for name in api:
        if name not in protos:
            p.add(os.path.basename(sym_path), 1, name,
                  'exported but declared in no public header')
            continue
        h, d = protos[name]
        stats['functions'] += 1
        stats['params'] += len(d.params)
        if not d.returns_void:
            stats['nonvoid'] += 1
        block = doc_of.get((h.display, d.start))
        if block is None:
            p.add(h.display, d.line, name, 'no kernel-doc block')
            continue
        stats['documented'] += check_params(p, h, block, name, d.params)
        ctx, ret = check_sections(p, h, block, name, not d.returns_void,
                                  forbid_return=d.returns_void)
        stats['context'] += ctx
        stats['returns'] += ret and not d.returns_void

    # Call-site twins.
    for name in symbols:
        if not name.endswith('_at'):
            continue
        base = name[:-3]
        if base not in exported:
            p.add(os.path.basename(sym_path), 1, name,
                  f'an _at twin without {base}')
            continue
        if name not in protos or base not in protos:
            p.add(os.path.basename(sym_path), 1, name,
                  'declared in no public header')
            continue
        h, d = protos[name]
        want = protos[base][1].params + ['file', 'line']
        if d.params != want:
            p.add(h.display, d.line, name,
                  f'parameters {d.params} are not {base}\'s + file, line')

    # Structs and enums.
    for h in headers:
        for d in h.decls:
            if d.kind not in ('struct', 'union', 'enum'):
                continue
            stats['structs'] += 1
            block = doc_of.get((h.display, d.start))
            if block is None:
                p.add(h.display, d.line, f'{d.kind} {d.name}',
                      'no kernel-doc block')
                continue
            inside, outside = block.params()
            for nm in outside:
                p.add(h.display, block.line, f'{d.kind} {d.name}',
                      f'@{nm}: is not right after the summary line')
            inline = inline_member_docs(h.text, d.body)
            private = private_ranges(h.text, d.body)
            members = member_names(h.text, h.masked, d.body, d.kind)
            names = {nm for nm, _ in members}
            for nm, off in members:
                if any(a <= off < b for a, b in private):
                    continue
                stats['members'] += 1
                if nm not in inside and nm not in inline:
                    p.add(h.display, line_of(h.text, off),
                          f'{d.kind} {d.name}', f'member {nm} undocumented')
            for nm, ln in inside.items():
                if nm not in names:
                    p.add(h.display, ln, f'{d.kind} {d.name}',
                          f'@{nm}: is not a member')

    for ln in p.lines:
        print(ln)
    print(f'check-docs: {stats["functions"]} functions, '
          f'{stats["documented"]} of {stats["params"]} parameters with '
          f'@param: lines, {stats["context"]} with Context:, '
          f'{stats["returns"]} of {stats["nonvoid"]} non-void with Return:; '
          f'{stats["structs"]} structs and enums, {stats["members"]} public '
          f'members; {len(p.lines)} problem'
          f'{"" if len(p.lines) == 1 else "s"}')
    return 1 if p.lines else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
