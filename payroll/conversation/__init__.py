"""Payroll's part in the conversation, by concern: its words (vocabulary), understanding a
request (understanding), setting up a group (setup, exploration), reading an answer (answers)
and the template question it answers (template_question), read-only questions (questions),
and the domain that joins them (domain); its labelled requests and dialogues (evaluation)."""
