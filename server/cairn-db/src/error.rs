//! Why a database tool did not answer, worded for the model (and the user reading along).

/// A refused or failed database call. No variant holds a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    #[error(
        "no database connection named `{name}`; the configured ones are: {}",
        list(known)
    )]
    UnknownConnection { name: String, known: Vec<String> },
    #[error("database `{name}`: {reason}")]
    BadSpec { name: String, reason: String },
    #[error("database `{name}`: its password could not be read: {reason}")]
    Password { name: String, reason: String },
    #[error("database `{name}`: could not connect: {reason}")]
    Connect { name: String, reason: String },
    #[error("database `{name}`: {reason}")]
    Refused { name: String, reason: String },
    #[error("the database said: {0}")]
    Engine(String),
    #[error("the statement ran longer than {secs} s and was cancelled in the database")]
    Timeout { secs: u64 },
    #[error("cancelled; the statement was cancelled in the database")]
    Cancelled,
    /// A read refused by cairn before it ran: `what` has an effect outside the tables (files,
    /// other sessions, settings, sequences) that the engine's read-only transaction allows.
    #[error("refused in a read-only call: {what}, because {why}; nothing was run")]
    ReadOnlyRefused { what: String, why: String },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none (add `[db.NAME] url = ...` to your own config)".to_owned()
    } else {
        names.join(", ")
    }
}
