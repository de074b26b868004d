#!/usr/bin/env python3
"""check_ini.py WHYSLOW CONF: every key `whyslow --config-help=ini` prints (from the key tables of
the core and of the plugins in WHYSLOW_PLUGIN_DIR) is in CONF, in its section, with its default:
"key = default" when it has one, a commented ";key = ..." example when it has none."""
import re
import subprocess
import sys


def parse(text, keep_comments):
    """{section: {key: value or None (commented out)}}"""
    out, sec = {}, None
    for line in text.splitlines():
        line = line.strip()
        m = re.fullmatch(r'\[([^\]]+)\]', line)
        if m:
            sec = out.setdefault(m.group(1), {})
            continue
        m = re.fullmatch(r'(;?)\s*([a-z_]+)\s*=\s*(.*)', line)
        if m and sec is not None and (keep_comments or not m.group(1)):
            if m.group(1):
                sec.setdefault(m.group(2), None)
            else:
                sec[m.group(2)] = m.group(3).strip()
    return out


whyslow, conf = sys.argv[1], sys.argv[2]
helped = subprocess.run([whyslow, '--config-help=ini'], check=True, capture_output=True,
                        text=True).stdout
want = parse(helped, keep_comments=True)
have = parse(open(conf).read(), keep_comments=True)
bad = []
if 'core' not in want or len(want) < 2:
    bad.append('--config-help=ini printed no [core] or no plugin section:\n' + helped)
nkeys = 0
for sec, keys in want.items():
    for key, default in keys.items():
        nkeys += 1
        got = have.get(sec, {})
        if key not in got:
            bad.append('[%s] %s is missing from %s (default: %s)' % (sec, key, conf, default))
        elif default is not None and got[key] != default:
            bad.append('[%s] %s = %s in %s, but its default is %s' %
                       (sec, key, got[key], conf, default))
        elif default is None and got[key] is not None:
            bad.append('[%s] %s = %s is set in %s; it has no default, so show it commented out' %
                       (sec, key, got[key], conf))
for line in bad:
    print('FAIL:', line)
if not bad:
    print('ok: %s holds all %d keys of %d sections with their defaults' % (conf, nkeys, len(want)))
sys.exit(1 if bad else 0)
