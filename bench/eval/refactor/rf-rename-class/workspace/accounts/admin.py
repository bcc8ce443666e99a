from .model import UserRecord


class AdminRecord(UserRecord):
    def display(self):
        return "[admin] " + super().display()
