from django.urls import path

from reports.views import csv_export

urlpatterns = [
    path("v1/reports/<int:pk>/export/", csv_export.download),
]
