"""The request cap of an invoice upload. Every multipart request is refused while it
streams in once it passes KEEL_UPLOAD_MAX_BYTES (2 MB: config.parsers.UploadSizeLimit);
an invoice may be 5 MB, so the views that take one — the claim page and the chat's
invoice attachment — raise the cap for that request only, to one invoice plus its form.
A view that calls `invoice_upload_limit` must do so before anything reads request.POST
(so: csrf_exempt outside, csrf_protect inside, as Django's docs on upload handlers say)."""
from __future__ import annotations

from django.http import HttpRequest

from config.parsers import RequestTooLarge, UploadSizeLimit

from .services import MAX_INVOICE_BYTES

FORM_ALLOWANCE = 64 * 1024  # the other fields and the multipart framing


class InvoiceUploadLimit(UploadSizeLimit):
    max_bytes = MAX_INVOICE_BYTES + FORM_ALLOWANCE

    def _refusal(self) -> RequestTooLarge:
        return RequestTooLarge(f"The upload is larger than the invoice limit of {MAX_INVOICE_BYTES // 1048576} MB.")

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length and content_length > self.max_bytes:
            raise self._refusal()

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.max_bytes:
            raise self._refusal()
        return raw_data


def invoice_upload_limit(request: HttpRequest) -> None:
    """This request's upload handlers, with the invoice's cap instead of the general one."""
    request.upload_handlers = [InvoiceUploadLimit(request)] + [
        h for h in request.upload_handlers if not isinstance(h, UploadSizeLimit)]
