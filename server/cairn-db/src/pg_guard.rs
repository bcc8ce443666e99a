//! What a PostgreSQL read refuses before it reaches the server.
//!
//! A read-only transaction stops writes to tables, but not what a function or a utility
//! statement does outside them: `COPY ... TO` a file or `PROGRAM`, the file functions, signals to
//! other backends, connections to other servers, settings, advisory locks. A superuser (or a
//! member of `pg_read_server_files`, `pg_signal_backend` ...) may do all of that in one. So a
//! read is checked here first: its first keyword must start a query, and no word in it may name
//! one of those functions. The words come from a tokeniser that follows PostgreSQL's lexer for
//! strings (`'...'`, `E'...'`, `$tag$...$tag$`), quoted identifiers and nested comments, so that
//! quoting, case, comments and schema qualification (`pg_catalog.pg_read_file`) cannot hide a
//! name; `pg::begin_read_only` sets `standard_conforming_strings` so the server reads `'...'` as
//! this does. A name is refused wherever it appears, even as a column name: a false refusal is
//! better than a missed call.

use crate::error::DbError;
use crate::sql_words::{Token, quoted_name, unreadable};

/// Statements a read may start with (after any opening parentheses).
const QUERIES: &[&str] = &["select", "with", "values", "table", "show", "explain"];

/// Why a family of functions is refused.
const FILES: &str = "it reads, writes or lists files on the database server, which a read-only transaction does not stop";
const SIGNALS: &str = "it signals other sessions or changes the server's state, which a read-only transaction does not stop";
const REMOTE: &str = "it connects from the database server to another server";
const SETTINGS: &str = "it changes a setting of the session (it could lift the statement timeout); SHOW and current_setting read them";
const SEQUENCES: &str = "it advances or sets a sequence, which no rollback undoes";
const LOCKS: &str = "it takes an advisory lock that other sessions wait on";
const HIDDEN_SQL: &str = "it runs SQL given as a string, which cairn cannot check";
const REPLICATION: &str = "it changes or consumes the server's replication or statistics state";
const NOTIFY: &str = "it sends a notification to other sessions";

/// Refused functions (and the few views that read server files), by exact name.
const NAMES: &[(&str, &str)] = &[
    ("pg_stat_file", FILES),
    ("pg_logdir_ls", FILES),
    ("pg_current_logfile", FILES),
    ("pg_hba_file_rules", FILES),
    ("pg_ident_file_mappings", FILES),
    ("pg_show_all_file_settings", FILES),
    ("lo_import", FILES),
    ("lo_export", FILES),
    ("lo_from_bytea", FILES),
    ("lo_put", FILES),
    ("lo_create", FILES),
    ("lo_creat", FILES),
    ("lo_unlink", FILES),
    ("lo_truncate", FILES),
    ("lo_truncate64", FILES),
    ("lowrite", FILES),
    ("pg_terminate_backend", SIGNALS),
    ("pg_cancel_backend", SIGNALS),
    ("pg_reload_conf", SIGNALS),
    ("pg_rotate_logfile", SIGNALS),
    ("pg_rotate_logfile_old", SIGNALS),
    ("pg_promote", SIGNALS),
    ("pg_switch_wal", SIGNALS),
    ("pg_switch_xlog", SIGNALS),
    ("pg_wal_replay_pause", SIGNALS),
    ("pg_wal_replay_resume", SIGNALS),
    ("pg_xlog_replay_pause", SIGNALS),
    ("pg_xlog_replay_resume", SIGNALS),
    ("pg_backup_start", SIGNALS),
    ("pg_backup_stop", SIGNALS),
    ("pg_start_backup", SIGNALS),
    ("pg_stop_backup", SIGNALS),
    ("pg_log_backend_memory_contexts", SIGNALS),
    ("pg_import_system_collations", SIGNALS),
    ("pg_truncate_visibility_map", SIGNALS),
    ("set_config", SETTINGS),
    ("nextval", SEQUENCES),
    ("setval", SEQUENCES),
    ("ts_stat", HIDDEN_SQL),
    ("ts_rewrite", HIDDEN_SQL),
    ("pg_notify", NOTIFY),
    ("pg_replication_slot_advance", REPLICATION),
    ("pg_drop_replication_slot", REPLICATION),
];

/// Refused families, by the start of the name.
const PREFIXES: &[(&str, &str)] = &[
    // pg_read_file, pg_read_binary_file
    ("pg_read_", FILES),
    // pg_ls_dir, pg_ls_logdir, pg_ls_waldir, pg_ls_tmpdir ...
    ("pg_ls_", FILES),
    // adminpack's pg_file_write, pg_file_rename, pg_file_unlink ...; the pg_file_settings view
    ("pg_file_", FILES),
    ("dblink", REMOTE),
    ("postgres_fdw", REMOTE),
    ("pg_background", HIDDEN_SQL),
    // query_to_xml, query_to_xmlschema, query_to_xml_and_xmlschema
    ("query_to_xml", HIDDEN_SQL),
    ("cursor_to_xml", HIDDEN_SQL),
    ("pg_advisory_", LOCKS),
    ("pg_try_advisory_", LOCKS),
    ("pg_stat_reset", REPLICATION),
    ("pg_stat_statements_reset", REPLICATION),
    ("pg_create_", REPLICATION),
    ("pg_copy_", REPLICATION),
    ("pg_logical_", REPLICATION),
    ("pg_replication_origin_", REPLICATION),
    ("binary_upgrade_", REPLICATION),
];

/// Refuses `sql` unless it is a query that can only read (see the module's comment).
pub(crate) fn check_read(sql: &str) -> Result<(), DbError> {
    let tokens = tokens(sql)?;
    let first = tokens.iter().find(|t| !matches!(t, Token::Open));
    match first {
        Some(Token::Word(w)) if QUERIES.contains(&w.as_str()) => {}
        Some(Token::Word(w)) => return Err(statement(w)),
        // Empty, or only punctuation: the server says what is wrong.
        _ => {}
    }
    for t in &tokens {
        if let Token::Word(w) = t
            && let Some(why) = denied(w)
        {
            return Err(DbError::ReadOnlyRefused {
                what: format!("`{w}`"),
                why: why.to_owned(),
            });
        }
    }
    Ok(())
}

/// Why the function or view `word` (lower case) is refused, if it is.
fn denied(word: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(n, _)| *n == word)
        .or_else(|| PREFIXES.iter().find(|(p, _)| word.starts_with(p)))
        .map(|(_, why)| *why)
}

/// The refusal of a statement that is not a query.
fn statement(word: &str) -> DbError {
    let why = match word {
        "copy" => {
            "COPY reads and writes files on the database server and runs programs there (TO/FROM PROGRAM), which a read-only transaction does not stop; db_export writes a query's rows to a workspace file"
        }
        "set" | "reset" => {
            "it changes a setting of the session (it could lift the statement timeout); SHOW reads one"
        }
        "do" | "call" => "it runs procedural code that cairn cannot check",
        "load" => "it loads a library into the database server",
        _ => {
            "a read runs only SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN; db_execute runs other statements once the user approves"
        }
    };
    DbError::ReadOnlyRefused {
        what: format!("the {} statement", word.to_ascii_uppercase()),
        why: why.to_owned(),
    }
}

/// PostgreSQL's lexical structure, as far as needed to find every identifier.
fn tokens(sql: &str) -> Result<Vec<Token>, DbError> {
    let s: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') {
            // PostgreSQL's whitespace only: other spaces are identifier characters to it.
            i += 1;
        } else if c == '-' && next == Some('-') {
            while i < s.len() && s[i] != '\n' && s[i] != '\r' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Comments nest in PostgreSQL.
            let mut depth = 0usize;
            loop {
                match (s.get(i), s.get(i + 1)) {
                    (None, _) => return Err(unreadable("a comment is not closed")),
                    (Some('/'), Some('*')) => {
                        depth += 1;
                        i += 2;
                    }
                    (Some('*'), Some('/')) => {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => i += 1,
                }
            }
        } else if c == '\'' {
            i = string(&s, i + 1, false)?;
        } else if (c == 'e' || c == 'E') && next == Some('\'') {
            i = string(&s, i + 2, true)?;
        } else if (c == 'u' || c == 'U') && next == Some('&') && s.get(i + 2) == Some(&'"') {
            // U&"d\0061ta": the escapes could spell any name; not worth decoding in a read.
            return Err(unreadable(
                "it has a Unicode-escaped identifier (U&\"...\")",
            ));
        } else if (c == 'u' || c == 'U') && next == Some('&') && s.get(i + 2) == Some(&'\'') {
            // A string of data; with the default escape `\` its quotes are plain `''`.
            i = string(&s, i + 3, false)?;
        } else if c == '"' {
            let word;
            (word, i) = quoted_name(&s, i + 1, '"')?;
            // Compared in lower case too: `"PG_READ_FILE"` names no function, but refusing it
            // costs nothing.
            out.push(Token::Word(word.to_lowercase()));
        } else if c == '$' && dollar_tag(&s, i).is_some() {
            let tag = dollar_tag(&s, i).unwrap_or_default();
            let close: Vec<char> = tag.chars().collect();
            let mut j = i + close.len();
            loop {
                if j >= s.len() {
                    return Err(unreadable("a dollar-quoted string is not closed"));
                }
                if s[j..].starts_with(&close) {
                    i = j + close.len();
                    break;
                }
                j += 1;
            }
        } else if ident_start(c) {
            let start = i;
            // `$` may follow the first letter of an identifier (`a$b`), never start one.
            while i < s.len() && (ident_start(s[i]) || s[i].is_ascii_digit() || s[i] == '$') {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            // The server folds ASCII only.
            out.push(Token::Word(word.to_ascii_lowercase()));
        } else if c.is_ascii_digit() {
            // Digits only: letters after them (`1e5`, `0x1F`, or junk an old server splits
            // off as a name) become words of their own, so no name hides in a number.
            while i < s.len() && (s[i].is_ascii_digit() || s[i] == '_' || s[i] == '.') {
                i += 1;
            }
        } else {
            out.push(if c == '(' { Token::Open } else { Token::Other });
            i += 1;
        }
    }
    Ok(out)
}

/// PostgreSQL's first character of an identifier: ASCII letters, `_`, and any non-ASCII.
fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

/// The index after a string literal whose body starts at `i`; `escapes` for `E'...'`, where a
/// backslash escapes the next character.
fn string(s: &[char], mut i: usize, escapes: bool) -> Result<usize, DbError> {
    loop {
        match (s.get(i), s.get(i + 1)) {
            (None, _) => return Err(unreadable("a string is not closed")),
            (Some('\\'), Some(_)) if escapes => i += 2,
            (Some('\''), Some('\'')) => i += 2,
            (Some('\''), _) => return Ok(i + 1),
            _ => i += 1,
        }
    }
}

/// The opening `$tag$` at `i`, if one starts there (`$1` is a parameter, not a tag).
fn dollar_tag(s: &[char], i: usize) -> Option<String> {
    let mut j = i + 1;
    while let Some(&c) = s.get(j) {
        if c == '$' {
            return Some(s[i..=j].iter().collect());
        }
        let ok = ident_start(c) || (j > i + 1 && c.is_ascii_digit());
        if !ok {
            return None;
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(sql: &str) -> bool {
        matches!(check_read(sql), Err(DbError::ReadOnlyRefused { .. }))
    }

    #[test]
    fn queries_pass() {
        for sql in [
            "SELECT 1",
            "  (SELECT 1) UNION (SELECT 2)",
            "with x as (select 1) select * from x",
            "VALUES (1)",
            "TABLE t",
            "SHOW statement_timeout",
            "EXPLAIN (FORMAT JSON) SELECT * FROM t",
            "SELECT 'pg_read_file(''/etc/passwd'')', $$ nextval('s') $$, $q$ set_config $q$",
            "SELECT E'it\\'s pg_sleep', current_setting('statement_timeout'), pg_sleep(1)",
            "SELECT /* pg_read_file(x) /* nested */ still comment */ 1 -- lo_export\n",
            "SELECT a$b FROM t WHERE x = $1",
            "SELECT * FROM pg_stat_activity",
            "",
        ] {
            assert_eq!(check_read(sql), Ok(()), "{sql}");
        }
    }

    #[test]
    fn hidden_names_are_found() {
        for sql in [
            "SELECT pg_read_file('/etc/passwd')",
            "select PG_CATALOG.PG_READ_FILE('/etc/passwd')",
            "SELECT pg_catalog . /* x */ \"pg_read_binary_file\"('/etc/passwd')",
            "SELECT \"pg_ls_dir\"('.')",
            "SELECT 'it''s', pg_stat_file('x')",
            "SELECT E'\\\\', lo_export(1, '/tmp/x'), ''",
            "SELECT E'\\'', lo_import('/etc/passwd')",
            "SELECT $a$ $b$ $a$, pg_terminate_backend(1)",
            "SELECT /* /* */ */ set_config('statement_timeout', '0', false)",
            "SELECT x FROM t WHERE y = nextval('s')",
            "SELECT * FROM dblink('host=h', 'select 1') AS t(a int)",
            "SELECT query_to_xml('select pg_read_file(''/etc/passwd'')', true, true, '')",
            "SELECT pg_advisory_lock(1)",
            "SELECT * FROM pg_file_settings",
            "SELECT\x0cpg_cancel_backend(1)",
            "SELECT 1pg_terminate_backend(1)",
        ] {
            assert!(refused(sql), "{sql}");
        }
    }

    #[test]
    fn statements_other_than_queries_are_refused() {
        for sql in [
            "COPY t TO '/tmp/x'",
            "copy (select 1) to program 'touch /tmp/x'",
            "(COPY t TO '/tmp/x')",
            "/* c */ SET statement_timeout = 0",
            "reset all",
            "DO $$ BEGIN PERFORM 1; END $$",
            "LOAD 'plpgsql'",
            "LISTEN x",
            "LOCK TABLE t",
        ] {
            assert!(refused(sql), "{sql}");
        }
    }

    #[test]
    fn unreadable_text_is_refused() {
        for sql in [
            "SELECT 'open",
            "SELECT E'open\\'",
            "SELECT \"open",
            "SELECT /* /* */ open",
            "SELECT $x$ open",
            "SELECT U&\"\\0070g_read_file\"('/etc/passwd')",
        ] {
            assert!(refused(sql), "{sql}");
        }
    }
}
