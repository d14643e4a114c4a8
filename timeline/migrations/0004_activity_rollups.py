from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("timeline", "0003_activity_run_conversation_started_by_and_more"),
    ]

    operations = [
        migrations.AddField(model_name="activity", name="cost",
                            field=models.DecimalField(decimal_places=6, default=0, max_digits=14)),
        migrations.AddField(model_name="activity", name="error_count", field=models.IntegerField(default=0)),
        migrations.AddField(model_name="activity", name="frame_count", field=models.IntegerField(default=0)),
        migrations.AddField(model_name="activity", name="frames_from",
                            field=models.DateTimeField(blank=True, help_text="start of the earliest frame", null=True)),
        migrations.AddField(model_name="activity", name="frames_until",
                            field=models.DateTimeField(blank=True, help_text="end of the latest frame", null=True)),
        migrations.AddField(model_name="activity", name="latency_ms",
                            field=models.FloatField(default=0, help_text="sum of the frames' latencies")),
        migrations.AddField(model_name="activity", name="links", field=models.JSONField(
            blank=True, default=dict,
            help_text="business objects touched: {kind: [ids]} (tool calls, approvals, …)")),
        migrations.AddField(model_name="activity", name="tokens_in", field=models.BigIntegerField(default=0)),
        migrations.AddField(model_name="activity", name="tokens_out", field=models.BigIntegerField(default=0)),
    ]
