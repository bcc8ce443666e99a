import unittest

from accounts.invite import invite
from accounts.signup import signup


class AccountsTest(unittest.TestCase):
    def test_normalized(self):
        self.assertEqual(signup(set(), " Bob@Example.COM "), "Bob@example.com")
        self.assertEqual(invite({}, "a@B.org", "me"), {"a@b.org": "me"})
