"""The migrations say what the models say, and a label change (AlterFieldLabel,
config/migration_operations.py) changes nothing but labels."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.state import ProjectState
from django.db.models import Field

from config.migration_operations import AlterFieldLabel


@pytest.mark.django_db  # makemigrations checks the history's consistency against the database
def test_the_models_and_the_migrations_agree():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)  # exits 1 on a missing migration
    assert "No changes detected" in out.getvalue()


def _without_labels(field) -> tuple:
    _, path, args, kwargs = field.deconstruct()
    return path, args, {k: v for k, v in kwargs.items() if k not in Field.non_db_attrs}


@pytest.mark.django_db
def test_every_label_change_changes_only_labels():
    """Walk every migration in order; each AlterFieldLabel's field differs from the one it
    replaces in its labels only (a column change hidden in one would never reach the database)."""
    loader = MigrationLoader(connection)
    state, seen, labels = ProjectState(real_apps=loader.unmigrated_apps), set(), 0
    for leaf in sorted(loader.graph.leaf_nodes()):
        for key in loader.graph.forwards_plan(leaf):
            if key in seen:
                continue
            seen.add(key)
            migration = loader.graph.nodes[key]
            for operation in migration.operations:
                if isinstance(operation, AlterFieldLabel):
                    before = state.models[key[0], operation.model_name_lower].fields[operation.name]
                    assert _without_labels(before) == _without_labels(operation.field), (key, operation.name)
                    labels += 1
                operation.state_forwards(key[0], state)
    assert labels >= 178  # the four verbose-name migrations'


def test_a_change_beyond_the_label_is_caught():
    """The check above would see a label change that also alters the column."""
    from django.db import models

    assert _without_labels(models.CharField(max_length=10, verbose_name="a")) == \
        _without_labels(models.CharField(max_length=10, verbose_name="b", help_text="c"))
    assert _without_labels(models.CharField(max_length=10)) != _without_labels(models.CharField(max_length=20))
