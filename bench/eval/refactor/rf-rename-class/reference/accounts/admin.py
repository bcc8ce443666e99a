from .model import Account


class AdminRecord(Account):
    def display(self):
        return "[admin] " + super().display()
