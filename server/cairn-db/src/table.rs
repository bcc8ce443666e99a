//! How a described database table reads: columns, indexes, foreign keys. Rows are shown by the
//! tool kit's shared [`Table`].

use cairn_toolkit::table::escape;
pub use cairn_toolkit::table::{Cell, Limits, Table};

/// One column of a described table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    pub data_type: String,
    pub nullable: bool,
    /// The default expression, empty when none.
    pub default: String,
    pub primary_key: bool,
}

/// A table as `db_describe` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Description {
    pub table: String,
    /// The row count or estimate, worded (`12 rows`, `about 1000000 rows (estimate)`).
    pub rows: String,
    pub columns: Vec<Column>,
    /// `name (unique): columns` or the engine's definition.
    pub indexes: Vec<String>,
    /// `column → table(column)` or the engine's definition.
    pub foreign_keys: Vec<String>,
}

impl Description {
    pub(crate) fn render(&self, engine: &str) -> String {
        let mut out = format!("Table `{}` ({engine}), {}\n\n", self.table, self.rows);
        out.push_str("| column | type | nullable | default | primary key |\n| --- | --- | --- | --- | --- |\n");
        for c in &self.columns {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                escape(&c.name),
                escape(&c.data_type),
                if c.nullable { "yes" } else { "no" },
                escape(&c.default),
                if c.primary_key { "yes" } else { "" },
            ));
        }
        let list = |title: &str, items: &[String]| {
            if items.is_empty() {
                format!("\n{title}: none\n")
            } else {
                format!(
                    "\n{title}:\n{}",
                    items.iter().map(|i| format!("- {i}\n")).collect::<String>()
                )
            }
        };
        out.push_str(&list("Indexes", &self.indexes));
        out.push_str(&list("Foreign keys", &self.foreign_keys));
        out
    }
}
