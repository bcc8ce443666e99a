import unittest

from mailer.alerts import alert
from mailer.digest import daily


class MailerTest(unittest.TestCase):
    def test_callers(self):
        self.assertEqual(alert("disk"), {"to": "mail.internal:2525", "body": "ALERT: disk", "retries": 5})
        self.assertEqual(daily(["a", "b"])["to"], "mail.internal:25")
