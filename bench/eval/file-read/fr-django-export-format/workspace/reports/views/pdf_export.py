from django.http import HttpResponse

from reports.models import Report


def download(request, pk):
    report = Report.objects.get(pk=pk)
    response = HttpResponse(report.render_pdf(), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="report-{pk}.pdf"'
    return response
