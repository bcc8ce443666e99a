import unittest

from accounts.admin import AdminRecord
from accounts.model import UserRecord
from accounts.store import Store


class AccountsTest(unittest.TestCase):
    def test_store(self):
        s = Store()
        s.add(UserRecord("Ada", "ada@example.org"))
        s.add(AdminRecord("Root", "root@example.org"))
        self.assertEqual(s.find("ada@example.org").display(), "Ada <ada@example.org>")
        self.assertTrue(s.find("root@example.org").display().startswith("[admin]"))
