"""Hand-written hot-path statements (timeline.sql): converted once to PostgreSQL's
own placeholders, so that nothing is parsed again on each execution."""
from timeline.sql import Statement, text_array


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
