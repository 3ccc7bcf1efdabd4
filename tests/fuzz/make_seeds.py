#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target into corpus/NAME/seed-*: well
formed inputs the fuzzers start from (inputs that once failed are kept there
too, as crash-*, and are not written by this script). Each target reads its
input as a script (see the *_fuzz.cpp files); these build such scripts."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# --- envelope: [u8 piece size - 1][piece bytes]... -------------------------
def envelope(kind, buffers=(), body=b"", sender=0, receiver=1, request=0, flags=0):
    out = struct.pack("<IBBHQQQII", 0x56454D52, 1, kind, len(buffers), sender,
                      receiver, request, len(body), flags)
    for off, length in buffers:
        out += struct.pack("<QQ", off, length)
    return out + body


def pieces(stream, size):
    out = b""
    for i in range(0, len(stream), size):
        chunk = stream[i:i + size]
        out += bytes([len(chunk) - 1]) + chunk
    return out


msgs = (envelope(2, [(0, 4096), (65536, 1000)], b"\x01\x02\x03", 7, 42, 9)
        + envelope(5, [(4096, 8192)]) + envelope(1, [], b"hello")
        + envelope(6, [], b"sink", 0, 0, 3) + envelope(9, [(0, 100)], b"\0" * 12))
write("envelope", "mixed-64", pieces(msgs, 64))
write("envelope", "mixed-7", pieces(msgs, 7))
write("envelope", "outside-arena", pieces(envelope(1, [(1 << 20, 1)]), 40))
# lent buffers (flag 2): one in the sender's range beside one in our arena
write("envelope", "lent", pieces(envelope(1, [(1 << 61, 1 << 20), (0, 64)], b"x", flags=2)
                                 + envelope(19, [], b"\x06" + struct.pack("<QQ", 1 << 61, 1 << 60)),
                                 64))
write("envelope", "farewell", pieces(envelope(1, [], b"bye") + envelope(10), 64))


# --- tcp_frames: ops [0 u16 n-1 bytes] feed, [2 u16] read, [3 u8 ...] map --
def frame(kind, length=0, offset=0, extra=0, payload=b""):
    return struct.pack("<BBHIQQ", kind, 0, 0, length, offset, extra) + payload


def feed(data):
    return bytes([0]) + struct.pack("<H", len(data) - 1) + data


def feed_frame(kind, length=0, offset=0, extra=0, payload=b""):
    out = feed(frame(kind, length, offset, extra))
    if payload:
        out += feed(payload)
    return out


hello = feed_frame(1, 16, 3, 0x504354314853524D)  # version 3, accepts 16 maps
gated = bytes([0xFE])
authorize = bytes([4])
read = bytes([2]) + struct.pack("<H", 4095)
map_region = bytes([3, 1])
map_once = bytes([3, 2])  # to be written once, in order
unmap_region = bytes([3, 0, 1])
write("tcp_frames", "data", hello + feed_frame(2, 5, payload=b"hello") + read)
write("tcp_frames", "iowrite", hello + map_region +
      feed_frame(3, 16, 0x10000, payload=b"A" * 16) + feed_frame(2, 3, payload=b"abc") + read)
write("tcp_frames", "iowrite-edge", hello + map_region +
      feed_frame(3, 8, 0x10000 + 4096 - 8, payload=b"B" * 8) + read)
write("tcp_frames", "unmap", hello + map_region + unmap_region +
      feed_frame(3, 8, 0x10000, payload=b"C" * 8) + feed_frame(6, 0, 0x10000) + read)
write("tcp_frames", "peer-map-shutdown", hello + feed_frame(4, 0, 0x5000, 4096) +
      feed_frame(5, 0, 0x5000) + feed_frame(8) + feed_frame(7) + read)
write("tcp_frames", "iowrite-once", hello + map_once +
      feed_frame(3, 2048, 0x10000, payload=b"D" * 2048) +
      feed_frame(3, 2048, 0x10000 + 2048, payload=b"E" * 2048) + unmap_region +
      feed_frame(3, 16, 0x10000, payload=b"F" * 16) + read)
write("tcp_frames", "iowrite-once-out-of-order", hello + map_once +
      feed_frame(3, 16, 0x10000 + 16, payload=b"G" * 16) + read)
write("tcp_frames", "gated-held-map", gated + hello + feed_frame(2, 5, payload=b"hello") +
      feed_frame(4, 0, 0x5000, 4096) + read + authorize + feed_frame(5, 0, 0x5000) + read)
write("tcp_frames", "gated-iowrite", gated + hello + map_region +
      feed_frame(3, 16, 0x10000, payload=b"A" * 16) + authorize + read)


# --- engine: [u8 conn-data choice] then ops ---------------------------------
def imm(value, length=0):
    return bytes([2]) + struct.pack("<II", value, length)


def ring_write(at, data):
    return bytes([1]) + struct.pack("<H", at) + data


def sgl_write(at, addr, key, length):
    return bytes([0]) + struct.pack("<HQII", at, addr, key, length)


app_read = bytes([3]) + struct.pack("<H", 4095)
app_send = bytes([4]) + struct.pack("<H", 999)
complete = bytes([5])
# conn-data byte 1: the default riomesh peer.
write("engine", "data", bytes([1]) + ring_write(0, b"x" * 100) + imm(100, 100) + app_read)
write("engine", "send", bytes([1]) + app_send + complete + app_send + complete)
write("engine", "sgl", bytes([1]) + sgl_write(0, 0x200000, 22, 4096) + imm(0x80000000 | 10, 16)
      + app_send + complete)
write("engine", "iomap", bytes([1]) + sgl_write(32, 0x300000, 23, 65536) + imm(0xA0000000, 16))
write("engine", "shutdown", bytes([1]) + imm(0x60000000 | 1) + app_read)


# --- config: YAML -------------------------------------------------------------
write("config", "node", b"""node:
  name: broker
  listen: 127.0.0.1:7481
  fabric: auto
cluster:
  peers:
    - {name: sub-1, address: 127.0.0.1:7483}
channel:
  arena: 64MiB
  keepalive: 1s
actors:
  - type: pubsub.broker
    name: broker
    params: {wait_for_subscribers: 2}
""")
ROOT = os.path.dirname(os.path.dirname(HERE))
for name, path in [("example-node", "examples/node.yaml"),
                   ("pubsub-broker", "examples/pubsub/cluster/broker.yaml")]:
    with open(os.path.join(ROOT, path), "rb") as f:
        write("config", name, f.read())
write("config", "bad", b"node:\n  name: [\n  listen: nowhere\nchannel: {arena: -1}\n")
