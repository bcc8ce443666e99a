"""Messages (JSON objects) over a stream of frames."""
import json

from .framing import decode_frames, encode_frame


def pack(messages):
    """A list of messages as one byte stream."""
    return b"".join(
        encode_frame(json.dumps(message, ensure_ascii=False, sort_keys=True))
        for message in messages
    )


def unpack(stream):
    """The messages of a complete byte stream."""
    frames, rest = decode_frames(stream)
    if rest:
        raise ValueError(f"{len(rest)} trailing bytes")
    return [json.loads(frame) for frame in frames]
