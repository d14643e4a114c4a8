"""Expenses' words in the conversation: its name, blueprint and routes, and the words that
make a message its own."""
from __future__ import annotations

from workflows.conversation import Vocabulary


NAME = "expenses"
BLUEPRINT = "expense_claim"
ASK_ROUTE = "expense_ask"
START_ROUTE = "expense_claim"
INVOICE_ROUTE = "expense_invoice"
PERSONA = "Keel files the user's expense claims, with their invoices, and checks them against the travel policy."
VOCABULARY = Vocabulary(
    subject_en=(r"expenses?", r"reimburse(ment)?"), subject_zh=("报销",),
    act_en=(r"file (an? |my |the )?(expense|claim|reimbursement)s?( claim)?", r"reimburse me"),
    act_zh=("报销",),  # asking to be reimbursed is a request to act
)
