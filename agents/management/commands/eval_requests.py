"""python manage.py eval_requests [--backend builtin|openai|scripted] [--split tune|heldout]

Measures every registered domain's labelled requests (workflows.conversation.Evaluation)."""
import os

from django.core.management.base import BaseCommand

from agents.evaluation import evaluate, labelled_requests, measures


class Command(BaseCommand):
    help = "Measure the intent and each domain's first-step measures over the labelled requests."

    def add_arguments(self, parser):
        parser.add_argument("--backend", default=None, help="the model backend (KEEL_LLM); default: as configured")
        parser.add_argument("--split", choices=["tune", "heldout"], default=None, help="only one part of the set")
        parser.add_argument("--misses", type=int, default=50, help="how many misses to print")

    def handle(self, *args, backend=None, split=None, misses=50, **options):
        if backend:
            os.environ["KEEL_LLM"] = backend
        rows = [r for r in labelled_requests() if split is None or r["s"] == split]
        score = evaluate(rows)
        self.stdout.write(f"{len(rows)} requests (backend {os.environ.get('KEEL_LLM', 'builtin')}"
                          + (f", split {split}" if split else ", tune + heldout") + ")")
        for measure in measures():
            self.stdout.write(f"  {measure:<10} {score.accuracy(measure):6.1%}  "
                              f"({score.hits.get(measure, 0)}/{score.totals.get(measure, 0)})")
        if score.misses:
            self.stdout.write(f"misses ({len(score.misses)}):")
            for line in score.misses[:misses]:
                self.stdout.write("  " + line)
