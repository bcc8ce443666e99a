from django.http import HttpResponse

from reports.models import Report


def download(request, pk):
    report = Report.objects.get(pk=pk)
    response = HttpResponse(report.to_csv(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="report-{pk}.csv"'
    return response
