from legacy_geo.bbox import bbox
from legacy_geo.distance import haversine


def route_length(points):
    return sum(haversine(a, b) for a, b in zip(points, points[1:]))


def area_of(points):
    return bbox(points)
