"""python manage.py eval_requests [--backend builtin|openai|scripted] [--split tune|heldout]"""
import os

from django.core.management.base import BaseCommand

from agents.evaluation import MEASURES, evaluate, labelled_requests
from payroll.seed import templates_seed


class Command(BaseCommand):
    help = "Measure intent, template, name and questions-asked accuracy over the labelled requests."

    def add_arguments(self, parser):
        parser.add_argument("--backend", default=None, help="the model backend (KEEL_LLM); default: as configured")
        parser.add_argument("--split", choices=["tune", "heldout"], default=None, help="only one part of the set")
        parser.add_argument("--misses", type=int, default=50, help="how many misses to print")

    def handle(self, *args, backend=None, split=None, misses=50, **options):
        if backend:
            os.environ["KEEL_LLM"] = backend
        templates_seed()  # the catalog is global; the evaluation reads it
        rows = [r for r in labelled_requests() if split is None or r["s"] == split]
        score = evaluate(rows)
        self.stdout.write(f"{len(rows)} requests (backend {os.environ.get('KEEL_LLM', 'builtin')}"
                          + (f", split {split}" if split else ", tune + heldout") + ")")
        for measure in MEASURES:
            self.stdout.write(f"  {measure:<10} {score.accuracy(measure):6.1%}  "
                              f"({score.hits[measure]}/{score.totals[measure]})")
        if score.misses:
            self.stdout.write(f"misses ({len(score.misses)}):")
            for line in score.misses[:misses]:
                self.stdout.write("  " + line)
