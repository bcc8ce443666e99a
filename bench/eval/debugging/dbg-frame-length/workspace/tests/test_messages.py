import unittest

from wire.messages import pack, unpack


class MessagesTest(unittest.TestCase):
    def test_ascii(self):
        messages = [{"user": "ann", "text": "hello"}, {"user": "bob", "text": "hi"}]
        self.assertEqual(unpack(pack(messages)), messages)

    def test_accents(self):
        messages = [{"user": "Zoë", "text": "un café"}, {"user": "bob", "text": "ok"}]
        self.assertEqual(unpack(pack(messages)), messages)
