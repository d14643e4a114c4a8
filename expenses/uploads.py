"""The request cap of an invoice upload. Every multipart request is refused while it
streams in once it passes KEEL_UPLOAD_MAX_BYTES (2 MB: config.parsers.UploadSizeLimit);
an invoice may be 5 MB, so the routes that take one — the claim page, the chat's invoice
attachment and the two invoice endpoints of the API — raise the cap for that request
only, to one invoice plus its form. The cap must be in place before anything reads the
body: a page view calls `invoice_upload_limit` first (so: csrf_exempt outside,
csrf_protect inside, as Django's docs on upload handlers say); an API view takes
`InvoiceUploads` first among its bases, which sets it before DRF authenticates (a
session's CSRF check reads the form)."""
from __future__ import annotations

from django.http import HttpRequest
from django.utils.translation import gettext as _

from config.parsers import RequestTooLarge, UploadSizeLimit

from .records.services import MAX_INVOICE_BYTES

FORM_ALLOWANCE = 64 * 1024  # the other fields and the multipart framing


class InvoiceUploadLimit(UploadSizeLimit):
    max_bytes = MAX_INVOICE_BYTES + FORM_ALLOWANCE

    def refusal(self) -> RequestTooLarge:
        return RequestTooLarge(_("The upload is larger than the invoice limit of %(mb)s MB.")
                               % {"mb": MAX_INVOICE_BYTES // 1048576})


def invoice_upload_limit(request: HttpRequest) -> None:
    """This request's upload handlers, with the invoice's cap instead of the general one."""
    request.upload_handlers = [InvoiceUploadLimit(request)] + [
        h for h in request.upload_handlers if not isinstance(h, UploadSizeLimit)]


class InvoiceUploads:
    """An APIView that takes an invoice: the invoice's cap, set before DRF reads anything."""

    def initialize_request(self, request, *args, **kwargs):
        invoice_upload_limit(request)
        return super().initialize_request(request, *args, **kwargs)
