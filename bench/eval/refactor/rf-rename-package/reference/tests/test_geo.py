import unittest

from app import route_length
from geo.bbox import bbox


class GeoTest(unittest.TestCase):
    def test_route(self):
        self.assertAlmostEqual(route_length([(0, 0), (0, 1)]), 111.19, places=1)
        self.assertEqual(bbox([(1, 2), (3, -1)]), (1, -1, 3, 2))
