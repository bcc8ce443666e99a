//! What a SQLite statement may do besides reading and writing the one opened file, decided by
//! the engine's authorizer (`sqlite3_set_authorizer`) as each statement is prepared, so no parse
//! of the SQL is involved.
//!
//! Refused in every call: `ATTACH`/`DETACH` (another file, not checked by the workspace scope;
//! `VACUUM INTO` attaches its target the same way, so it is refused too), the `load_extension`
//! and `fts3_tokenizer` functions (code loaded or called by address), and the pragmas that act
//! outside the file (`temp_store_directory`, `data_store_directory`). Refused in a read: every
//! pragma but a list of reports (`table_info`, `user_version`, ... given no value), so
//! `query_only`, `journal_mode` and `writable_schema` cannot be changed.

use std::sync::{Arc, Mutex};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

/// The first action the authorizer denied: what, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denied {
    pub what: String,
    pub why: String,
}

/// Where the authorizer leaves its refusal for the caller to report.
pub(crate) type Slot = Arc<Mutex<Option<Denied>>>;

/// Pragmas a read may run with no value: they report and change nothing.
const REPORTS: &[&str] = &[
    "application_id",
    "auto_vacuum",
    "cache_size",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "encoding",
    "foreign_keys",
    "freelist_count",
    "function_list",
    "journal_mode",
    "module_list",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "schema_version",
    "user_version",
];

/// Pragmas whose argument names a table or index (or a row cap): still only reports.
const REPORTS_OF: &[&str] = &[
    "foreign_key_check",
    "foreign_key_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "quick_check",
    "table_info",
    "table_list",
    "table_xinfo",
];

/// Pragmas refused even in an approved write: they act on the process or on files elsewhere.
const OUTSIDE_THE_FILE: &[&str] = &["temp_store_directory", "data_store_directory"];

/// Functions refused everywhere: extension loading (never enabled, refused by name so the
/// answer says why) and the FTS3 tokenizer registration, which takes a raw pointer.
const FUNCTIONS: &[&str] = &["load_extension", "fts3_tokenizer"];

/// The decision on one action; `write` for an approved `db_execute` or import.
pub(crate) fn decide(action: &AuthAction<'_>, write: bool) -> Option<Denied> {
    let denied = |what: String, why: &str| {
        Some(Denied {
            what,
            why: why.to_owned(),
        })
    };
    match action {
        AuthAction::Attach { filename } => denied(
            format!("opening another database file `{filename}` (ATTACH or VACUUM INTO)"),
            "only the connection's own file is opened, through the workspace scope; another \
             file could be outside the workspace, or be created",
        ),
        // An ATTACH whose file is an expression comes without a name (rusqlite: Unknown).
        AuthAction::Unknown { code, .. } if *code == rusqlite::ffi::SQLITE_ATTACH => denied(
            "opening another database file named by an expression (ATTACH)".to_owned(),
            "only the connection's own file is opened, through the workspace scope; another \
             file could be outside the workspace, or be created",
        ),
        AuthAction::Unknown { code, .. } if *code == rusqlite::ffi::SQLITE_DETACH => {
            denied("DETACH".to_owned(), "no other database is ever attached")
        }
        AuthAction::Detach { database_name } => denied(
            format!("DETACH `{database_name}`"),
            "no other database is ever attached",
        ),
        AuthAction::Function { function_name }
            if FUNCTIONS
                .iter()
                .any(|f| f.eq_ignore_ascii_case(function_name)) =>
        {
            denied(
                format!("the function {function_name}()"),
                "it loads or calls native code, outside what SQL can do to the file",
            )
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let is = |list: &[&str]| list.iter().any(|p| p.eq_ignore_ascii_case(pragma_name));
            let shown = match pragma_value {
                Some(v) => format!("PRAGMA {pragma_name} = {v}"),
                None => format!("PRAGMA {pragma_name}"),
            };
            if is(OUTSIDE_THE_FILE) {
                denied(
                    shown,
                    "it changes where SQLite writes files for the whole process",
                )
            } else if write || is(REPORTS_OF) || (is(REPORTS) && pragma_value.is_none()) {
                None
            } else {
                denied(
                    shown,
                    "a read may only run pragmas that report (table_info, user_version, \
                     journal_mode, ... with no value); this one could change the connection \
                     or the file (db_execute runs approved changes)",
                )
            }
        }
        _ => None,
    }
}

/// Installs the authorizer on `conn`; a denial is left in the returned slot.
pub(crate) fn install(conn: &rusqlite::Connection, write: bool) -> Slot {
    let slot: Slot = Arc::default();
    let seen = Arc::clone(&slot);
    conn.authorizer(Some(move |cx: AuthContext<'_>| {
        match decide(&cx.action, write) {
            None => Authorization::Allow,
            Some(d) => {
                let mut first = seen.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(d);
                Authorization::Deny
            }
        }
    }));
    slot
}

/// The refusal left in `slot`, taken out.
pub(crate) fn take(slot: &Slot) -> Option<Denied> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma<'a>(name: &'a str, value: Option<&'a str>) -> AuthAction<'a> {
        AuthAction::Pragma {
            pragma_name: name,
            pragma_value: value,
        }
    }

    #[test]
    fn reads_run_only_reporting_pragmas_and_writes_never_move_files() {
        assert_eq!(decide(&pragma("user_version", None), false), None);
        assert_eq!(decide(&pragma("TABLE_INFO", Some("t")), false), None);
        assert!(decide(&pragma("user_version", Some("3")), false).is_some());
        assert!(decide(&pragma("query_only", Some("0")), false).is_some());
        assert!(decide(&pragma("writable_schema", None), false).is_some());
        assert_eq!(decide(&pragma("user_version", Some("3")), true), None);
        for write in [false, true] {
            assert!(decide(&pragma("temp_store_directory", Some("'/x'")), write).is_some());
            assert!(decide(&AuthAction::Attach { filename: "/x.db" }, write).is_some());
            let f = AuthAction::Function {
                function_name: "Load_Extension",
            };
            assert!(decide(&f, write).is_some());
            let f = AuthAction::Function {
                function_name: "lower",
            };
            assert_eq!(decide(&f, write), None);
        }
    }
}
