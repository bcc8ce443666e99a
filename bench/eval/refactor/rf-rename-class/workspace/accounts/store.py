from typing import Dict, Optional

from .model import UserRecord


class Store:
    def __init__(self):
        self.by_email: Dict[str, UserRecord] = {}

    def add(self, record: UserRecord) -> None:
        self.by_email[record.email] = record

    def find(self, email: str) -> Optional[UserRecord]:
        return self.by_email.get(email)
