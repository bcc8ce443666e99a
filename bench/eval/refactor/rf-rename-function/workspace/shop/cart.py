from .pricing import calc_total


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, qty, price):
        self.lines.append((qty, price))

    def total(self):
        return calc_total(self.lines)
