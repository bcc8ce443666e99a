from django.db import models


class Report(models.Model):
    title = models.CharField(max_length=200)
    month = models.DateField()

    def to_csv(self):
        ...

    def render_pdf(self):
        ...
