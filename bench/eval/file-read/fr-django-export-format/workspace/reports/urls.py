from django.urls import path

from .views import listing
from .views import pdf_export as export

urlpatterns = [
    path("reports/", listing.index),
    path("reports/<int:pk>/", listing.detail),
    path("reports/<int:pk>/export/", export.download),
]
