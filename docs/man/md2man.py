#!/usr/bin/env python3
# md2man.py IN.md OUT.7 NAME SECTION VERSION "one-line summary"
# Turns docs/PLUGINS.md into whyslow-plugin(7) at build time, so the man page is the document
# itself and cannot fall behind it. Handles the Markdown that document uses: headings, paragraphs,
# fenced code, bullet lists, pipe tables, `code`, **bold**, *emphasis*, [text](link).
import re
import sys

src, out, name, section, version, summary = sys.argv[1:7]


def esc(s):
    s = s.replace('\\', '\\e').replace('-', '\\-')
    return s


def inline(s):
    s = esc(s)
    s = re.sub(r'\[([^\]]+)\]\([^)]+\)', r'\1', s)
    s = re.sub(r'`([^`]+)`', r'\\fB\1\\fR', s)
    s = re.sub(r'\*\*([^*]+)\*\*', r'\\fB\1\\fR', s)
    s = re.sub(r'(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])', r'\\fI\1\\fR', s)
    if s.startswith('.') or s.startswith("'"):
        s = '\\&' + s
    return s


lines = open(src, encoding='utf-8').read().splitlines()
res = ['.\\" Generated from docs/PLUGINS.md by docs/man/md2man.py: edit that file instead.',
       '.TH %s %s "2026" "whyslow %s" "Miscellaneous"' % (name.upper(), section, version),
       '.SH NAME', '%s \\- %s' % (esc(name), esc(summary))]
i = 0
in_code = False
while i < len(lines):
    l = lines[i]
    if l.startswith('```'):
        res.append('.fi' if in_code else '.nf')
        if not in_code:
            res.append('.RS 4')
        else:
            res.insert(len(res) - 1, '.RE')
        in_code = not in_code
    elif in_code:
        res.append(('\\&' if l.startswith(('.', "'")) else '') + esc(l))
    elif l.startswith('# '):
        res.append('.SH DESCRIPTION')
    elif l.startswith('## '):
        res.append('.SH ' + esc(l[3:].upper()))
    elif l.startswith('### '):
        res.append('.SS ' + esc(l[4:]))
    elif l.startswith('|'):
        rows = []
        while i < len(lines) and lines[i].startswith('|'):
            cells = [c.strip() for c in lines[i].strip('|').split('|')]
            if not all(re.fullmatch(r':?-+:?', c) for c in cells):
                rows.append(cells)
            i += 1
        i -= 1
        for r in rows[1:]:
            res.append('.TP')
            res.append(inline(r[0]))
            res.append(inline('; '.join(c for c in r[1:] if c)))
    elif re.match(r'\s*[*-] ', l):
        text = re.sub(r'^\s*[*-] ', '', l)
        while i + 1 < len(lines) and lines[i + 1].startswith('  ') and lines[i + 1].strip():
            i += 1
            text += ' ' + lines[i].strip()
        res.append('.IP \\(bu 2')
        res.append(inline(text))
    elif re.match(r'\d+\. ', l):
        res.append('.IP %s 3' % l.split('.')[0] + '.')
        res.append(inline(l.split('. ', 1)[1]))
    elif not l.strip():
        res.append('.PP')
    else:
        res.append(inline(l.strip()))
    i += 1
open(out, 'w', encoding='utf-8').write('\n'.join(res) + '\n')
