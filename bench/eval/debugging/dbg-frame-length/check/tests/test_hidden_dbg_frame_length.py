import unittest

from wire.framing import HEADER, decode_frames, encode_frame
from wire.messages import pack, unpack


class HiddenFrameTest(unittest.TestCase):
    def test_header_counts_bytes(self):
        self.assertEqual(encode_frame("abc"), b"\x00\x00\x00\x03abc")
        self.assertEqual(encode_frame("né"), b"\x00\x00\x00\x03n\xc3\xa9")
        self.assertEqual(encode_frame(""), b"\x00\x00\x00\x00")
        frame = encode_frame("日本 🎉")
        (length,) = HEADER.unpack_from(frame)
        self.assertEqual(length, len("日本 🎉".encode("utf-8")))
        self.assertEqual(len(frame), HEADER.size + length)

    def test_decode_stream(self):
        first, second = encode_frame("Grüße"), encode_frame("日本")
        self.assertEqual(decode_frames(first + second), (["Grüße", "日本"], b""))
        partial = second[:-2]
        self.assertEqual(decode_frames(first + partial), (["Grüße"], partial))
        self.assertEqual(decode_frames(first[:3]), ([], first[:3]))

    def test_messages(self):
        messages = [{"text": "ünïcödé ✓", "n": 1}, {"text": "plain"}, {"emoji": "🎉🎉"}]
        self.assertEqual(unpack(pack(messages)), messages)
        with self.assertRaises(ValueError):
            unpack(pack(messages)[:-1])
