//! CalDAV calendars: events listed with a time-range REPORT, created with PUT, through the web guard.
