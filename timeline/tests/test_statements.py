"""Hand-written hot-path statements (config.sql): converted once to PostgreSQL's
own placeholders, so that nothing is parsed again on each execution."""
import pytest
from django.contrib.auth.models import User
from django.db import transaction

from config.sql import Statement, text_array
from timeline.models import Conversation, Event
from timeline.services import conversation_create, event_append


def test_a_statement_numbers_its_parameters_once_each_in_order_of_first_use():
    statement = Statement("""
    -- a comment line is not sent
    SELECT %(b)s, %(a)s,
           %(b)s || '%%'
    """)
    assert statement.positional == "SELECT $1, $2,\n$1 || '%'"
    assert statement.names == ["b", "a"]
    assert str(statement) == "SELECT %(b)s, %(a)s,\n%(b)s || '%%'"


def test_a_text_array_literal_quotes_what_would_break_it():
    assert text_array([]) == "{}"
    assert text_array(["plain", 'say "hi"', "back\\slash", "a,b"]) == \
        '{"plain","say \\"hi\\"","back\\\\slash","a,b"}'


@pytest.mark.django_db
def test_an_event_for_a_conversation_that_is_gone_is_refused_by_name_and_nothing_is_written(demo):
    alice = User.objects.get(username="alice")
    conversation = conversation_create(tenant_id=alice.membership.tenant_id, user_id=alice.id, title="gone")
    conversation_id = conversation.id
    conversation.delete()
    with pytest.raises(Conversation.DoesNotExist, match=f"conversation {conversation_id} is gone"):
        with transaction.atomic():
            event_append(conversation_id=conversation_id, type="node.status", data={"node": "n1"})
    assert not Event.objects.filter(conversation_id=conversation_id).exists()
