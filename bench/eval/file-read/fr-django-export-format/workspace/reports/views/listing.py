from django.shortcuts import get_object_or_404, render

from reports.models import Report


def index(request):
    return render(request, "reports/index.html", {"reports": Report.objects.all()})


def detail(request, pk):
    report = get_object_or_404(Report, pk=pk)
    return render(request, "reports/detail.html", {"report": report})
