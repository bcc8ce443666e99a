"""Length-prefixed frames: each frame is a 4-byte big-endian length followed by that many
bytes of UTF-8 payload."""
import struct

HEADER = struct.Struct(">I")


def encode_frame(text):
    """One frame carrying `text`."""
    payload = text.encode("utf-8")
    return HEADER.pack(len(payload)) + payload


def decode_frames(data):
    """The texts of the complete frames at the start of `data`, and the bytes left over
    (the start of a frame still to come)."""
    frames = []
    offset = 0
    while len(data) - offset >= HEADER.size:
        (length,) = HEADER.unpack_from(data, offset)
        start = offset + HEADER.size
        if len(data) - start < length:
            break
        frames.append(data[start:start + length].decode("utf-8"))
        offset = start + length
    return frames, data[offset:]
