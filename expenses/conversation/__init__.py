"""The expense claim's part in the conversation, by concern, as payroll's: its words
(vocabulary), the invoice as an attachment (invoice), the turns that ask for a claim's
missing facts and start it or file a later invoice (turns), and the domain that joins them
(domain). Reading a claim's facts from a message is expenses.reading.facts."""
