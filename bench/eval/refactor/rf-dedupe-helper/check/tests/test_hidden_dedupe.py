import unittest
from unittest import mock

from accounts import emails, invite, signup


class HiddenDedupeTest(unittest.TestCase):
    def test_one_helper(self):
        self.assertEqual(emails.normalize_email("X@Y.Z"), "X@y.z")
        with mock.patch.object(emails, "normalize_email", side_effect=lambda a: "k") as m:
            try:
                signup.signup(set(), "q@q")
                invite.invite({}, "q@q", "me")
            except Exception:
                pass
        # Both modules must go through the shared helper (imported as module or name).
        used = [signup.__dict__.get("normalize_email"), invite.__dict__.get("normalize_email")]
        self.assertTrue(m.call_count == 2 or all(u is emails.normalize_email or u is None for u in used))
        with self.assertRaises(ValueError):
            users = set()
            signup.signup(users, "a@b.c")
            signup.signup(users, "a@B.C")
