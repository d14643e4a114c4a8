"""Dates as each language writes them (FORMAT_MODULE_PATH): Django's own locale formats, with the
two a page uses for a moment — "Dec 3, 02:48" / "12月3日 02:48" and, with seconds and the year,
"Dec 3, 2026, 02:48:05" / "2026年12月3日 02:48:05". A template says `|date:"SHORT_DATETIME_FORMAT"`
or `|date:"DATETIME_FORMAT"`, never a pattern of one language."""
