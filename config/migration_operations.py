"""Migration operations of our own.

AlterFieldLabel: an AlterField that changes only what a person reads of a field (its
verbose_name, help_text or choices: Field.non_db_attrs), so nothing in the database. Django's
AlterField re-renders the model and every model related to it after each such change, in every
fresh `migrate`: the 178 label changes of the verbose-name migrations cost ~5 s of a fresh
database's ~10 s (`make run`'s first page, each test session's template). This one records the
new field in the migration state and leaves the rendered models as they are: no migration reads
a label, and the next operation on the model that needs it rendered renders it from that state.
`test_every_label_change_changes_only_labels` (config/tests/test_migrations.py) keeps each
use of it to labels."""
from django.db import migrations


class AlterFieldLabel(migrations.AlterField):
    def state_forwards(self, app_label, state):
        state.reload_model = lambda *args, **kwargs: None  # Django's alter_field, without the re-render
        try:
            super().state_forwards(app_label, state)
        finally:
            del state.reload_model  # the class's method again

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        pass  # a label: nothing in the database

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        pass

    def describe(self):
        return f"Alter the label of field {self.name} on {self.model_name}"
