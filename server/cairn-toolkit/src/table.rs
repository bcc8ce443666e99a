//! A result set as the model reads it: a Markdown table with its caps said out loud, and the
//! same rows as structured content. Shared by every tool that shows rows (databases, data files).

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// Caps on what one result shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Rows shown; the engine stops sending after one more.
    pub max_rows: usize,
    /// Bytes of the Markdown table; rows past it are left out.
    pub max_bytes: usize,
    /// Characters of one value; a longer one is cut with its length said.
    pub max_cell_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_rows: 200,
            max_bytes: 64 * 1024,
            max_cell_chars: 200,
        }
    }
}

/// One value as fetched: SQL NULL, text, or bytes (never shown raw).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// No value (SQL NULL, an empty cell).
    Null,
    /// The value as text.
    Text(String),
    /// A binary value of this many bytes.
    Bytes(usize),
}

/// Rows as fetched, at most `max_rows`, and whether the engine had more.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// The column names.
    pub columns: Vec<String>,
    /// The rows fetched, each as wide as `columns`.
    pub rows: Vec<Vec<Cell>>,
    /// Whether the source had more rows than were fetched.
    pub more: bool,
}

impl Table {
    /// The tool result: the Markdown table (with a note on what was left out) and the rows as
    /// structured content (`columns`, `rows`, `truncated`).
    pub fn result(&self, heading: &str, limits: &Limits) -> CallToolResult {
        self.result_hinting(heading, limits, "add a WHERE or LIMIT, or aggregate")
    }

    /// [`Table::result`], with `hint` saying how to see less when rows were left out.
    pub fn result_hinting(&self, heading: &str, limits: &Limits, hint: &str) -> CallToolResult {
        let (markdown, shown) = self.markdown(limits);
        let truncated = self.more || shown < self.rows.len();
        let mut text = format!("{heading}\n\n{markdown}");
        let count = shown;
        if truncated {
            text.push_str(&format!(
                "\n({count} rows shown; more were left out: {hint})"
            ));
        } else {
            text.push_str(&format!(
                "\n({count} row{})",
                if count == 1 { "" } else { "s" }
            ));
        }
        let rows: Vec<Value> = self.rows[..shown]
            .iter()
            .map(|row| {
                Value::Array(
                    row.iter()
                        .map(|c| match c {
                            Cell::Null => Value::Null,
                            Cell::Text(t) => Value::String(cut(t, limits.max_cell_chars)),
                            Cell::Bytes(n) => Value::String(format!("<{n} bytes>")),
                        })
                        .collect(),
                )
            })
            .collect();
        let mut result = crate::reply::text(text);
        result.structured_content = Some(json!({
            "columns": self.columns,
            "rows": rows,
            "truncated": truncated,
        }));
        result
    }

    /// The table in Markdown, and how many rows fit under the byte cap.
    pub fn markdown(&self, limits: &Limits) -> (String, usize) {
        if self.columns.is_empty() {
            return ("(no columns)\n".to_owned(), self.rows.len());
        }
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(self.columns.iter().map(|c| escape(c)).collect());
        out.push_str(&line(
            self.columns.iter().map(|_| "---".to_owned()).collect(),
        ));
        let mut shown = 0;
        for row in &self.rows {
            let next = line(
                row.iter()
                    .map(|c| match c {
                        Cell::Null => "NULL".to_owned(),
                        Cell::Text(t) => escape(&cut(t, limits.max_cell_chars)),
                        Cell::Bytes(n) => format!("<{n} bytes>"),
                    })
                    .collect(),
            );
            if out.len() + next.len() > limits.max_bytes {
                break;
            }
            out.push_str(&next);
            shown += 1;
        }
        (out, shown)
    }
}

/// `text` cut to `max` characters, with its length said when cut.
pub fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({count} characters)")
}

/// A value in a Markdown table cell: pipes escaped, line breaks shown as `\n`.
pub fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\r', "\\r")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn text_of(r: &CallToolResult) -> String {
        r.content[0].as_text().unwrap().text.clone()
    }

    #[test]
    fn tables_escape_cells_cut_long_values_and_say_what_was_left_out() {
        let t = Table {
            columns: vec!["id".into(), "note".into()],
            rows: vec![
                vec![Cell::Text("1".into()), Cell::Text("a|b\nc".into())],
                vec![Cell::Null, Cell::Bytes(12)],
                vec![Cell::Text("3".into()), Cell::Text("x".repeat(300))],
            ],
            more: true,
        };
        let r = t.result("orders", &Limits::default());
        let text = text_of(&r);
        assert!(text.contains("| 1 | a\\|b\\nc |"), "{text}");
        assert!(text.contains("| NULL | <12 bytes> |"), "{text}");
        assert!(text.contains("… (300 characters)"), "{text}");
        assert!(text.contains("3 rows shown; more were left out"), "{text}");
        let s = r.structured_content.unwrap();
        assert_eq!(s["truncated"], true);
        assert_eq!(s["rows"][1], json!([null, "<12 bytes>"]));
    }

    #[test]
    fn the_byte_cap_cuts_whole_rows() {
        let t = Table {
            columns: vec!["v".into()],
            rows: (0..100)
                .map(|i| vec![Cell::Text(format!("{i:050}"))])
                .collect(),
            more: false,
        };
        let limits = Limits {
            max_bytes: 1000,
            ..Limits::default()
        };
        let r = t.result("t", &limits);
        let s = r.structured_content.unwrap();
        assert_eq!(s["truncated"], true);
        let shown = s["rows"].as_array().unwrap().len();
        assert!(shown > 5 && shown < 20, "{shown}");
    }
}
