"""The tool runtime's tables take the name of the app that owns them (they came from
agents in 0003 keeping their old names): a rename, rows and constraints kept."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('workflows', '0010_verbose_names_status_labels'),
    ]

    operations = [
        migrations.AlterModelTable(
            name='coordinateconsumption',
            table=None,
        ),
        migrations.AlterModelTable(
            name='provenanceblock',
            table=None,
        ),
        migrations.AlterModelTable(
            name='statecoordinate',
            table=None,
        ),
        migrations.AlterModelTable(
            name='toolcall',
            table=None,
        ),
    ]
