import typing
import unittest

import accounts.model
from accounts.admin import AdminRecord
from accounts.model import Account
from accounts.store import Store


class HiddenClassTest(unittest.TestCase):
    def test_renamed(self):
        self.assertTrue(issubclass(AdminRecord, Account))
        self.assertFalse(hasattr(accounts.model, "UserRecord"))
        hints = typing.get_type_hints(Store.add)
        self.assertIs(hints["record"], Account)
