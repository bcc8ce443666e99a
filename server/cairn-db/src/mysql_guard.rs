//! What a MariaDB or MySQL read refuses before it reaches the server.
//!
//! A read-only (XA) transaction stops writes to tables, but not what a statement does outside
//! them: `SELECT ... INTO OUTFILE` / `INTO DUMPFILE` writes a file on the server,
//! `LOAD_FILE()` reads one, `GET_LOCK()` takes a lock other sessions wait on, `SET` (and
//! `SET STATEMENT ... FOR`) could lift the statement timeout, `KILL` stops other sessions, a
//! UDF such as `sys_exec()` runs a program. A user with FILE, SUPER or CONNECTION ADMIN may
//! do all of that in one read. So a read is checked here first: its first keyword must start a
//! query, and no word in it may name one of those. The words come from a tokeniser that follows
//! MariaDB's lexer (`sql_lex.cc`): `'...'` and `"..."` strings with backslash escapes (the
//! session's `sql_mode` is set by `mysql::begin` so that the server reads them so too, and reads
//! `"..."` as a string), `` `...` `` identifiers, `#` comments, `-- ` comments only before a
//! space or control character, and `/* ... */` comments that do not nest. Executable comments
//! (`/*! ... */`, `/*M! ... */`, whose content the server runs as SQL when its version is high
//! enough) and optimizer hints (`/*+ ... */`) are refused as a whole: read as comments they
//! would hide code, read as code they could hide it the other way round. A name is refused
//! wherever it appears, even as a column name or in backticks: a false refusal is better than a
//! missed call.

use crate::error::DbError;
use crate::sql_words::{Token, quoted_name, unreadable};

/// Statements a read may start with (after any opening parentheses).
const QUERIES: &[&str] = &[
    "select", "with", "values", "table", "show", "explain", "describe", "desc",
];

/// Why a family of words is refused.
const FILES: &str = "it reads or writes files on the database server, which a read-only transaction does not stop; db_export writes a query's rows to a workspace file";
const LOCKS: &str = "it takes, frees or probes an advisory lock that other sessions wait on";
const PROGRAMS: &str = "it names a UDF that runs programs on the database server";
const LOAD: &str = "it exists to keep the server's CPU busy";
const ROW_LOCKS: &str = "it locks rows that other sessions' writes then wait on";

/// Refused words (functions and clause keywords), by exact name.
const NAMES: &[(&str, &str)] = &[
    ("outfile", FILES),
    ("dumpfile", FILES),
    ("load_file", FILES),
    ("infile", FILES),
    ("get_lock", LOCKS),
    ("release_lock", LOCKS),
    ("release_all_locks", LOCKS),
    ("is_used_lock", LOCKS),
    ("is_free_lock", LOCKS),
    ("sys_exec", PROGRAMS),
    ("sys_eval", PROGRAMS),
    ("sys_bineval", PROGRAMS),
    ("sys_get", PROGRAMS),
    ("sys_set", PROGRAMS),
    ("do_system", PROGRAMS),
    ("benchmark", LOAD),
];

/// Refused families, by the start of the name.
const PREFIXES: &[(&str, &str)] = &[
    // lib_mysqludf_sys_info, lib_mysqludf_sys ...
    ("lib_mysqludf_", PROGRAMS),
];

/// Refused pairs of consecutive words: locking reads (`FOR UPDATE` is refused by the server in
/// a read-only transaction, `LOCK IN SHARE MODE` is not).
const PAIRS: &[(&str, &str, &str)] = &[
    ("lock", "in", ROW_LOCKS),
    ("for", "share", ROW_LOCKS),
    ("for", "update", ROW_LOCKS),
];

/// Refuses `sql` unless it is a query that can only read (see the module's comment).
pub(crate) fn check_read(sql: &str) -> Result<(), DbError> {
    let tokens = tokens(sql)?;
    let mut rest = tokens.iter().skip_while(|t| matches!(t, Token::Open));
    match rest.next() {
        Some(Token::Word(w)) if QUERIES.contains(&w.as_str()) => {}
        Some(Token::Word(w)) => return Err(statement(w)),
        // Empty, or only punctuation: the server says what is wrong.
        _ => {}
    }
    // Text after a `;` is a second statement (the server's prepare refuses it too).
    if let Some(end) = tokens.iter().position(|t| *t == Token::End)
        && tokens[end..].iter().any(|t| *t != Token::End)
    {
        return Err(DbError::ReadOnlyRefused {
            what: "a second statement".to_owned(),
            why: "a read runs one statement".to_owned(),
        });
    }
    for t in &tokens {
        if let Token::Word(w) = t {
            for candidate in candidates(w) {
                if let Some(why) = denied(candidate) {
                    return Err(refused_word(candidate, why));
                }
            }
        }
    }
    for pair in tokens.windows(2) {
        if let [Token::Word(a), Token::Word(b)] = pair
            && let Some((_, _, why)) = PAIRS.iter().find(|(x, y, _)| like(a, x) && like(b, y))
        {
            return Err(DbError::ReadOnlyRefused {
                what: format!("`{} {}`", a.to_ascii_uppercase(), b.to_ascii_uppercase()),
                why: (*why).to_owned(),
            });
        }
    }
    Ok(())
}

fn refused_word(word: &str, why: &str) -> DbError {
    let shown: String = word.chars().take(64).collect();
    DbError::ReadOnlyRefused {
        what: format!("`{shown}`"),
        why: why.to_owned(),
    }
}

/// The names the server may read in the run `word`: the run itself, and for a run that starts
/// with digits what follows a number the server splits off (`5name`, `1e1name` after a sign
/// or as a float: the server lexes `1e1` and then `name`).
fn candidates(word: &str) -> Vec<&str> {
    let mut out = vec![word];
    let b = word.as_bytes();
    if b.first().is_some_and(u8::is_ascii_digit) {
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        out.push(&word[digits..]);
        if matches!(b.get(digits), Some(b'e' | b'E')) {
            let exponent = b[digits + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if exponent > 0 {
                out.push(&word[digits + 1 + exponent..]);
            }
        }
    }
    out
}

/// Whether `word` may be `name` to the server: ASCII letters compare without case, and any
/// other character compares equal to any letter (the server's identifier collation folds
/// accents: `lóad_file` could be `load_file` to some version).
fn like_prefix(word: &str, name: &str) -> bool {
    let mut chars = word.chars();
    name.bytes().all(|n| match chars.next() {
        Some(c) if c.is_ascii() => c.to_ascii_lowercase() as u32 == u32::from(n),
        Some(_) => true,
        None => false,
    })
}

fn like(word: &str, name: &str) -> bool {
    like_prefix(word, name) && word.chars().count() == name.len()
}

/// Why `word` is refused, if it is.
fn denied(word: &str) -> Option<&'static str> {
    // Only a word as short as a name can be it (saves counting a long run's characters).
    let exact = if word.len() <= 4 * 20 {
        NAMES.iter().find(|(n, _)| like(word, n))
    } else {
        None
    };
    exact
        .or_else(|| PREFIXES.iter().find(|(p, _)| like_prefix(word, p)))
        .map(|(_, why)| *why)
}

/// The refusal of a statement that is not a query.
fn statement(word: &str) -> DbError {
    let why = match word {
        "load" => {
            "LOAD DATA and LOAD XML read a file of the database server (or, with LOCAL, of cairn's machine) into a table"
        }
        "set" => {
            "it changes a setting (it could lift the statement timeout; SET STATEMENT ... FOR too); SHOW VARIABLES and SELECT @@name read them"
        }
        "do" => "DO evaluates expressions only for their effects (locks, sleeps, UDFs)",
        "handler" => "HANDLER opens a table past the end of the statement",
        "kill" => "it stops another session's statement or connection",
        "call" | "begin" | "if" | "case" | "while" | "loop" | "repeat" | "for" | "prepare"
        | "execute" | "deallocate" => "it runs procedural or dynamic SQL that cairn cannot check",
        "flush" | "reset" | "purge" | "shutdown" | "install" | "uninstall" | "binlog"
        | "change" | "start" | "stop" | "cache" => {
            "it changes the server's state (logs, caches, replication, plugins), which a read-only transaction does not stop"
        }
        "xa" | "commit" | "rollback" | "savepoint" | "release" | "lock" | "unlock" => {
            "it ends the read-only transaction cairn runs the read in, or locks tables"
        }
        _ => {
            "a read runs only SELECT, WITH, VALUES, TABLE, SHOW, EXPLAIN or DESCRIBE; db_execute runs other statements once the user approves"
        }
    };
    let shown: String = word.chars().take(64).collect();
    DbError::ReadOnlyRefused {
        what: format!("the {} statement", shown.to_ascii_uppercase()),
        why: why.to_owned(),
    }
}

/// MariaDB's whitespace (its `ctype` for ASCII; anything else is an identifier character).
fn space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// MariaDB's identifier characters: ASCII letters, digits, `_`, `$`, and any non-ASCII.
fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

/// MariaDB's lexical structure, as far as needed to find every identifier.
fn tokens(sql: &str) -> Result<Vec<Token>, DbError> {
    if sql.contains('\0') {
        // The server ends a `#` comment at a NUL, and reads one elsewhere as it sees fit: not
        // worth following.
        return Err(unreadable("it has a NUL character"));
    }
    let s: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if space(c) {
            i += 1;
        } else if c == '-' && next == Some('-') && s.get(i + 2).is_some_and(|d| !d.is_ascii()) {
            // The server decides on the first byte of the character, by its character set's
            // table: not worth following.
            return Err(unreadable("`--` is followed by a non-ASCII character"));
        } else if c == '#'
            || (c == '-'
                && next == Some('-')
                && s.get(i + 2)
                    .is_none_or(|&d| space(d) || d.is_ascii_control()))
        {
            // To the end of the line: `\n` only, as the server does (not `\r`).
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            if matches!(s.get(i + 2), Some('!' | '+'))
                || (matches!(s.get(i + 2), Some('M' | 'm')) && s.get(i + 3) == Some(&'!'))
            {
                return Err(DbError::ReadOnlyRefused {
                    what: "an executable comment or optimizer hint (`/*!`, `/*M!`, `/*+`)"
                        .to_owned(),
                    why: "the server runs its content as SQL (a hint can lift the statement timeout), so cairn cannot check it as a comment; write the SQL without the comment markers".to_owned(),
                });
            }
            // Comments do not nest in MariaDB: the first `*/` ends it.
            let mut j = i + 2;
            loop {
                match (s.get(j), s.get(j + 1)) {
                    (None, _) => return Err(unreadable("a comment is not closed")),
                    (Some('*'), Some('/')) => break,
                    _ => j += 1,
                }
            }
            i = j + 2;
        } else if c == '\'' || c == '"' {
            i = string(&s, i + 1, c)?;
        } else if c == '`' {
            let word;
            (word, i) = quoted_name(&s, i + 1, '`')?;
            out.push(Token::Word(word.to_ascii_lowercase()));
        } else if ident(c) {
            // One run, digits included: the server reads `1abc` as a name, and
            // [`candidates`] covers the numbers it splits off.
            let start = i;
            while i < s.len() && ident(s[i]) {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            out.push(Token::Word(word.to_ascii_lowercase()));
        } else {
            out.push(match c {
                '(' => Token::Open,
                ';' => Token::End,
                _ => Token::Other,
            });
            i += 1;
        }
    }
    Ok(out)
}

/// The index after a string literal quoted by `quote` whose body starts at `i`: a backslash
/// escapes the next character, a doubled quote is one.
fn string(s: &[char], mut i: usize, quote: char) -> Result<usize, DbError> {
    loop {
        match (s.get(i), s.get(i + 1)) {
            (None, _) | (Some('\\'), None) => return Err(unreadable("a string is not closed")),
            (Some('\\'), Some(_)) => i += 2,
            (Some(&a), Some(&b)) if a == quote && b == quote => i += 2,
            (Some(&a), _) if a == quote => return Ok(i + 1),
            _ => i += 1,
        }
    }
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
            "SHOW VARIABLES LIKE 'max_statement_time'",
            "EXPLAIN FORMAT=JSON SELECT * FROM t",
            "DESCRIBE t",
            "desc t",
            "SELECT 'into outfile', \"load_file('/etc/passwd')\", 'it''s get_lock', 'a\\'b sys_exec'",
            "SELECT \"a\\\"b outfile\", \"x\"\"y dumpfile\"",
            "SELECT 1 # load_file('/etc/passwd')\n, 2",
            "SELECT 1 -- get_lock('x', 1)\n, 2",
            "SELECT 1 /* load_file(x) /* not nested */ , 2",
            "SELECT sleep(1), sleep_count, @@secure_file_priv, @x := 1 FROM t",
            "SELECT a INTO @v FROM t",
            "SELECT x FROM t WHERE y = ? LOCK_t",
            "SELECT 1;",
            "SELECT 1 ; ; ",
            "",
        ] {
            assert_eq!(check_read(sql), Ok(()), "{sql}");
        }
    }

    #[test]
    fn hidden_names_are_found() {
        for sql in [
            "SELECT 1 INTO OUTFILE '/tmp/x'",
            "SELECT 1 INTO DUMPFILE '/tmp/x'",
            "WITH x AS (SELECT 1) SELECT * FROM x INTO OUTFILE '/tmp/x'",
            "SELECT * FROM (SELECT 1 INTO OUTFILE '/tmp/x') t",
            "SELECT LOAD_FILE('/etc/passwd')",
            "SELECT `load_file`('/etc/passwd')",
            "SELECT `LOAD_FILE`('/etc/passwd')",
            "SELECT lóad_file('/etc/passwd')",
            "SELECT 'it\\'s', load_file('/etc/passwd')",
            "SELECT '\\\\', load_file('/etc/passwd'), ''",
            "SELECT \"\\\"\", load_file('/etc/passwd')",
            "SELECT 1 --x\n, load_file('/etc/passwd')",
            "SELECT 1 --\u{1}x\n, 2 FROM t\r, load_file('/etc/passwd')",
            "SELECT 1e1load_file('/etc/passwd')",
            "SELECT 1e+5load_file('/etc/passwd')",
            "SELECT 5load_file",
            "SELECT GET_LOCK('x', 10)",
            "SELECT release_lock('x'), is_used_lock('x'), is_free_lock('x')",
            "SELECT benchmark(100000000, md5('a'))",
            "SELECT sys_exec('touch /tmp/x')",
            "SELECT lib_mysqludf_sys_info()",
            "VALUES (load_file('/etc/passwd'))",
            "EXPLAIN SELECT 1 INTO OUTFILE '/tmp/x'",
            "SELECT * FROM t LOCK IN SHARE MODE",
            "SELECT * FROM t FOR UPDATE",
            "SELECT * FROM t FOR SHARE",
            "SELECT * FROM t /* c */ FOR /* c */ UPDATE",
        ] {
            assert!(refused(sql), "{sql}");
        }
    }

    #[test]
    fn statements_other_than_queries_are_refused() {
        for sql in [
            "LOAD DATA INFILE '/etc/passwd' INTO TABLE t",
            "load data local infile '/etc/passwd' into table t",
            "(LOAD XML INFILE '/etc/passwd' INTO TABLE t)",
            "/* c */ SET GLOBAL max_statement_time = 0",
            "SET @@session.max_statement_time = 0",
            "SET STATEMENT max_statement_time = 0 FOR SELECT sleep(30)",
            "DO sleep(30)",
            "DO get_lock('x', 1)",
            "HANDLER t OPEN",
            "KILL 1",
            "KILL QUERY 1",
            "CALL p()",
            "BEGIN NOT ATOMIC SELECT 1; END",
            "EXECUTE IMMEDIATE 'SELECT 1'",
            "PREPARE s FROM 'SELECT 1'",
            "FLUSH PRIVILEGES",
            "SHUTDOWN",
            "INSTALL SONAME 'x'",
            "XA END 'x'",
            "label: BEGIN END",
            "ANALYZE SELECT 1",
            "SELECT 1; SET GLOBAL x = 1",
            "SELECT 1; SELECT 2",
        ] {
            assert!(refused(sql), "{sql}");
        }
    }

    #[test]
    fn executable_comments_and_unreadable_text_are_refused() {
        for sql in [
            "SELECT /*! load_file('/etc/passwd') */",
            "SELECT /*!50000 1 */",
            "/*!40101 SET GLOBAL max_statement_time = 0 */",
            "SELECT /*M!100000 1 */",
            "SELECT /*+ MAX_EXECUTION_TIME(0) */ 1",
            "SELECT /*!99999 'x */ load_file('/etc/passwd') -- ' */",
            "SELECT 'open",
            "SELECT 'open\\'",
            "SELECT \"open",
            "SELECT `open",
            "SELECT /* open",
            "SELECT 'x\\",
            "SELECT 1 # x\0, load_file('/etc/passwd')",
            "SELECT 1 --\u{a0} '\n, load_file('/etc/passwd') -- '",
        ] {
            assert!(refused(sql), "{sql}");
        }
    }

    #[test]
    fn refusals_name_the_word() {
        let said = |sql| {
            check_read(sql)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            said("SELECT 1 INTO OUTFILE '/tmp/x'"),
            format!("refused in a read-only call: `outfile`, because {FILES}; nothing was run")
        );
        assert!(
            said("KILL 1").starts_with("refused in a read-only call: the KILL statement, because ")
        );
    }
}
