"""The parameters of a catalogue search."""

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Query:
    text: str = ""
    min_price: Optional[float] = None
    max_price: Optional[float] = None
    in_stock_only: bool = False
    limit: Optional[int] = None

    def __post_init__(self):
        if self.min_price is not None and self.max_price is not None and self.min_price > self.max_price:
            raise ValueError("min_price is above max_price")
        if self.limit is not None and self.limit < 0:
            raise ValueError("limit is negative")
