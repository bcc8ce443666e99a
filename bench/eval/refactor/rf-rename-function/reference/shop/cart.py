from .pricing import order_total


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, qty, price):
        self.lines.append((qty, price))

    def total(self):
        return order_total(self.lines)
