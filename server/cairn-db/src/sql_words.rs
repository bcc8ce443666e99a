//! What the PostgreSQL and MariaDB read guards share: the tokens their tokenisers yield, the
//! refusal of text neither can follow, and the reading of a quoted name (`"..."` in
//! PostgreSQL, `` `...` `` in MariaDB), where a doubled quote stands for one. Each dialect's
//! lexer itself stays in its guard (`pg_guard.rs`, `mysql_guard.rs`): strings, comments and
//! what counts as a name differ too much to share.

use crate::error::DbError;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Token {
    /// An identifier or keyword, quoted or not, in lower case.
    Word(String),
    /// `(`: skipped before the first keyword.
    Open,
    /// `;`: the end of a statement (only MariaDB's guard marks it).
    End,
    /// Anything else that is not a string, a number's digits or a comment.
    Other,
}

/// Refusal of text the tokeniser cannot follow (the server would have refused it too, or it
/// hides names in a way the check does not decode).
pub(crate) fn unreadable(why: &str) -> DbError {
    DbError::ReadOnlyRefused {
        what: "the statement".to_owned(),
        why: format!("{why}, so cairn cannot check what it calls"),
    }
}

/// The name quoted by `quote` whose body starts at `i`, and the index after its closing quote.
pub(crate) fn quoted_name(
    s: &[char],
    mut i: usize,
    quote: char,
) -> Result<(String, usize), DbError> {
    let mut word = String::new();
    loop {
        match (s.get(i), s.get(i + 1)) {
            (None, _) => return Err(unreadable("a quoted identifier is not closed")),
            (Some(&a), Some(&b)) if a == quote && b == quote => {
                word.push(quote);
                i += 2;
            }
            (Some(&a), _) if a == quote => return Ok((word, i + 1)),
            (Some(&ch), _) => {
                word.push(ch);
                i += 1;
            }
        }
    }
}
