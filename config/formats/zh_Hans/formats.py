SHORT_DATETIME_FORMAT = "n月j日 H:i"
DATETIME_FORMAT = "Y年n月j日 H:i:s"
# Amounts grouped by thousands, as Chinese payslips and invoices print them (31,600.00).
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
