from typing import Dict, Optional

from .model import Account


class Store:
    def __init__(self):
        self.by_email: Dict[str, Account] = {}

    def add(self, record: Account) -> None:
        self.by_email[record.email] = record

    def find(self, email: str) -> Optional[Account]:
        return self.by_email.get(email)
