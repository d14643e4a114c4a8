from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0011_message_event_seq'),
    ]

    operations = [
        migrations.AddField(
            model_name='message',
            name='understood',
            field=models.CharField(blank=True, max_length=20),
        ),
    ]
