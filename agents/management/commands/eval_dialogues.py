"""python manage.py eval_dialogues [--backend builtin|openai|scripted] [--split tune|test]

Drives every registered domain's labelled multi-turn dialogues (workflows.conversation.Dialogues)
through the real conversation front, in a throwaway test database, and prints the figures —
per turn, per measure and per dialogue — and the misses."""
import os

from django.core.management.base import BaseCommand
from django.test.runner import DiscoverRunner
from django.test.utils import setup_test_environment, teardown_test_environment

from agents.evaluation import dialogue_measures, evaluate_dialogues, labelled_dialogues


def report(score, rows, split, write) -> None:
    write(f"{len(rows)} dialogues (backend {os.environ.get('KEEL_LLM', 'builtin')}"
          + (f", split {split}" if split else ", tune + test") + ")")
    for measure in dialogue_measures():
        write(f"  {measure:<10} {score.accuracy(measure):6.1%}  ({score.hits.get(measure, 0)}/"
              f"{score.totals.get(measure, 0)})")


class Command(BaseCommand):
    help = "Measure the conversation over the labelled multi-turn dialogues (per turn and per dialogue)."

    def add_arguments(self, parser):
        parser.add_argument("--backend", default=None, help="the model backend (KEEL_LLM); default: as configured")
        parser.add_argument("--split", choices=["tune", "test"], default=None, help="only one part of the set")
        parser.add_argument("--misses", type=int, default=80, help="how many misses to print")

    def handle(self, *args, backend=None, split=None, misses=80, **options):
        if backend:
            os.environ["KEEL_LLM"] = backend
        rows = [r for r in labelled_dialogues() if split is None or r["s"] == split]
        setup_test_environment()
        runner = DiscoverRunner(verbosity=0, interactive=False)
        databases = runner.setup_databases()
        try:
            score = evaluate_dialogues(rows)
        finally:
            runner.teardown_databases(databases)
            teardown_test_environment()
        report(score, rows, split, self.stdout.write)
        if score.misses:
            self.stdout.write(f"misses ({len(score.misses)}):")
            for line in score.misses[:misses]:
                self.stdout.write("  " + line)
