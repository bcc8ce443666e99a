//! CSV text checked before it reaches a database: a header of column names and records of the
//! same width, each fault named by its line.

use crate::error::DbError;

/// A parsed CSV file: the header and the records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Csv {
    pub columns: Vec<String>,
    pub records: Vec<Vec<String>>,
}

/// Parses `text` (RFC 4180; the first record is the header).
pub(crate) fn parse(text: &str) -> Result<Csv, DbError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(text.as_bytes());
    let fault = |e: csv::Error| {
        let line = e.position().map(csv::Position::line);
        DbError::Engine(match (line, e.kind()) {
            (
                _,
                csv::ErrorKind::UnequalLengths {
                    pos,
                    expected_len,
                    len,
                },
            ) => format!(
                "the CSV is malformed at line {}: {len} fields where the header has {expected_len}",
                pos.as_ref().map_or(0, csv::Position::line)
            ),
            (Some(line), _) => format!("the CSV is malformed at line {line}: {e}"),
            (None, _) => format!("the CSV is malformed: {e}"),
        })
    };
    let columns: Vec<String> = reader
        .headers()
        .map_err(fault)?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    if columns.is_empty() || columns.iter().any(String::is_empty) {
        return Err(DbError::Engine(
            "the CSV's first line must name every column".to_owned(),
        ));
    }
    let mut records = Vec::new();
    for record in reader.records() {
        records.push(record.map_err(fault)?.iter().map(str::to_owned).collect());
    }
    Ok(Csv { columns, records })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quoted_fields_and_faults_by_line() {
        let csv = parse("id,note\n1,\"a, \"\"quoted\"\"\nline\"\n2,b\n").unwrap();
        assert_eq!(csv.columns, ["id", "note"]);
        assert_eq!(csv.records[0], ["1", "a, \"quoted\"\nline"]);
        let e = parse("id,note\n1,a\n2,b,c\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the database said: the CSV is malformed at line 3: 3 fields where the header has 2"
        );
        assert!(parse("id,\n1,2\n").is_err());
    }
}
