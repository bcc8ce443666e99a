"""Reading a sensor log: one 'timestamp value' per line."""


def parse_readings(text):
    """The values of a sensor log, in order, as floats. Blank lines and '#' comments are
    skipped, and so are the readings the sensor marked 'NaN' (it had no value)."""
    rows = (line.split() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#"))
    return [float(value) for _, value in rows if value != "NaN"]
