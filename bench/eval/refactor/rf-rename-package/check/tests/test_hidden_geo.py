import importlib
import unittest

from geo.bbox import bbox
from geo.distance import haversine


class HiddenGeoTest(unittest.TestCase):
    def test_geo(self):
        self.assertAlmostEqual(haversine((0, 0), (1, 0)), 111.19, places=1)
        self.assertEqual(bbox([(0, 0)]), (0, 0, 0, 0))
        with self.assertRaises(ImportError):
            importlib.import_module("legacy_geo.distance")
