#!/usr/bin/env python3
"""Writes the seed corpus of store_log_fuzz (record format: src/store/store_wal.c)."""
import os
import struct
import zlib

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
MAGIC = 0x4C32334B


def rec(rtype, key=b"", val=b"", rev=0, aux=0):
    payload = struct.pack("<BBHIQQ", rtype, 0, len(key), len(val), rev, aux) + key + val
    plen = struct.pack("<I", len(payload))
    crc = zlib.crc32(payload, zlib.crc32(plen)) & 0xFFFFFFFF
    return struct.pack("<I", MAGIC) + plen + struct.pack("<I", crc) + payload


def main():
    os.makedirs(HERE, exist_ok=True)
    log = (rec(1, b"//pods/default/a", b'{"v":1}', 1, 1)
           + rec(1, b"//pods/default/b", b'{"v":2}', 2, 2)
           + rec(1, b"//pods/default/a", b'{"v":3}', 3, 1)
           + rec(2, b"//pods/default/b", b"", 4, 0))
    seeds = {
        "valid_log": log,
        "torn_header": log + rec(1, b"//x/y/z/n", b"{}", 5, 5)[:7],
        "torn_record": log + rec(1, b"//x/y/z/n", b"{}", 5, 5)[:-3],
        "garbled_tail": log[:-2] + bytes([log[-2] ^ 0xFF, log[-1]]),
        "garbled_middle": log[:20] + b"\x00" + log[21:],
        "revision_gap": rec(1, b"//p/n/a", b"{}", 1, 1) + rec(1, b"//p/n/b", b"{}", 3, 3),
        "delete_missing": rec(2, b"//p/n/a", b"", 1, 0),
        "snapshot": (rec(3, rev=2, aux=1) + rec(1, b"//p/n/a", b"{}", 2, 1)
                     + rec(4, rev=2, aux=1)),
        "logged_log": rec(5, rev=0, aux=1) + log,
        "snapshot_with_log": (rec(3, rev=2, aux=1) + rec(5, rev=2, aux=3)
                              + rec(1, b"//p/n/a", b"{}", 2, 1) + rec(4, rev=2, aux=1)),
        "log_begin_late": log + rec(5, rev=4, aux=2),
        "closed_mark": rec(6, rev=4, aux=1),
        "bad_type": rec(9, b"//p/n/a", b"", 1, 0),
        "huge_length": struct.pack("<III", MAGIC, 0xFFFFFFF0, 0),
        "empty": b"",
    }
    for name, data in seeds.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
