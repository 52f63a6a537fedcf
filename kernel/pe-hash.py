#!/usr/bin/env python3
"""pe-hash.py [--alg sha256] FILE...: the Authenticode digest of each PE/COFF image (an EFI
application such as a bzImage with the EFI stub, signed or not), as UEFI firmware computes it for
LoadImage: the headers without the CheckSum field and the Certificate Table directory entry, the
sections in file order, then any data after them except the attribute certificate table. This is
the digest OVMF's DxeTpm2MeasureBootLib logs as EV_EFI_BOOT_SERVICES_APPLICATION in PCR 4 and
checks against db. Prints "HEX  FILE". Written from the PE/COFF specification ("Calculating the
PE Image Hash"); bounded: every offset is checked against the file size."""
import hashlib
import struct
import sys


def fail(msg):
    sys.stderr.write("pe-hash: %s\n" % msg)
    sys.exit(1)


def u16(b, o):
    if o + 2 > len(b):
        fail("truncated at %d" % o)
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    if o + 4 > len(b):
        fail("truncated at %d" % o)
    return struct.unpack_from("<I", b, o)[0]


def authenticode(b, alg):
    if b[:2] != b"MZ":
        fail("no MZ header")
    pe = u32(b, 0x3C)
    if b[pe:pe + 4] != b"PE\0\0":
        fail("no PE signature")
    coff = pe + 4
    nsec = u16(b, coff + 2)
    opt_size = u16(b, coff + 16)
    opt = coff + 20
    magic = u16(b, opt)
    if magic == 0x20B:      # PE32+
        dd = opt + 112
    elif magic == 0x10B:    # PE32
        dd = opt + 96
    else:
        fail("unknown optional header magic %#x" % magic)
    checksum = opt + 64
    size_of_headers = u32(b, opt + 60)
    ndirs = u32(b, dd - 4)
    if ndirs < 5:
        fail("no certificate table directory entry")
    cert_dir = dd + 4 * 8
    cert_off, cert_size = u32(b, cert_dir), u32(b, cert_dir + 4)
    if size_of_headers > len(b) or cert_dir + 8 > size_of_headers:
        fail("headers out of range")
    h = hashlib.new(alg)
    h.update(b[:checksum])
    h.update(b[checksum + 4:cert_dir])
    h.update(b[cert_dir + 8:size_of_headers])
    sec = opt + opt_size
    sections = []
    for i in range(nsec):
        s = sec + 40 * i
        raw_size, raw_ptr = u32(b, s + 16), u32(b, s + 20)
        if raw_size:
            if raw_ptr + raw_size > len(b):
                fail("section %d out of range" % i)
            sections.append((raw_ptr, raw_size))
    sum_of_bytes = size_of_headers
    for ptr, size in sorted(sections):
        h.update(b[ptr:ptr + size])
        sum_of_bytes += size
    end = len(b) - cert_size if cert_size else len(b)
    if cert_size and cert_off + cert_size != len(b):
        fail("the certificate table is not at the end of the file")
    if end > sum_of_bytes:
        h.update(b[sum_of_bytes:end])
    return h.hexdigest()


def main():
    args = sys.argv[1:]
    alg = "sha256"
    if args[:1] == ["--alg"]:
        alg, args = args[1], args[2:]
    if not args:
        fail("usage: pe-hash.py [--alg ALG] FILE...")
    for f in args:
        with open(f, "rb") as fh:
            data = fh.read(64 << 20)
        print("%s  %s" % (authenticode(data, alg), f))


main()
