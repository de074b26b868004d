#!/usr/bin/env python3
"""Extract the kernel's own BTF (what /sys/kernel/btf/vmlinux serves) from an
uncompressed kernel Image, which is not an ELF file and has no section table.

    extract-btf.py IMAGE OUT

The .BTF section sits in the Image's read-only data as a raw blob: a header
(magic 0xeB9F, version 1, hdr_len 24, then the offsets and lengths of the type
and string sections) followed by the two sections.  Several byte runs can look
like a header; we keep the largest one whose sections are self-consistent
(types first, strings right after, string table starting and ending with NUL).
`bpftool btf dump file OUT format c` then gives the vmlinux.h for that kernel.
"""
import gzip
import struct
import sys

HDR = struct.Struct("<HBBIIIII")  # magic, version, flags, hdr_len, type_off, type_len, str_off, str_len
MAGIC = b"\x9f\xeb\x01\x00\x18\x00\x00\x00"  # 0xeB9F little-endian, version 1, flags 0, hdr_len 24


def candidates(img):
    pos = img.find(MAGIC)
    while pos >= 0:
        _, _, _, hdr_len, type_off, type_len, str_off, str_len = HDR.unpack_from(img, pos)
        end = pos + hdr_len + str_off + str_len
        strs = pos + hdr_len + str_off
        if (type_off == 0 and str_off == type_len and type_len > 0 and str_len > 0
                and end <= len(img) and img[strs] == 0 and img[end - 1] == 0):
            yield pos, end
        pos = img.find(MAGIC, pos + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: extract-btf.py IMAGE OUT")
    with open(sys.argv[1], "rb") as f:
        img = f.read()
    if img[:2] == b"\x1f\x8b":  # a gzip-compressed Image (vmlinuz on some distributions)
        img = gzip.decompress(img)
    found = sorted(candidates(img), key=lambda c: c[1] - c[0], reverse=True)
    if not found:
        sys.exit(f"extract-btf.py: no BTF blob found in {sys.argv[1]}: was the kernel built with CONFIG_DEBUG_INFO_BTF=y?")
    start, end = found[0]
    with open(sys.argv[2], "wb") as f:
        f.write(img[start:end])
    print(f"extract-btf.py: {end - start} bytes of BTF at offset {start:#x} of {sys.argv[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
