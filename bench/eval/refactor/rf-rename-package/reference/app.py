from geo.bbox import bbox
from geo.distance import haversine


def route_length(points):
    return sum(haversine(a, b) for a, b in zip(points, points[1:]))


def area_of(points):
    return bbox(points)
