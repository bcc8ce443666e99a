//! [`ToolError`]: why a built-in tool call failed, in words the user and the model can act on.
//!
//! Every built-in tool and the helpers beneath it fail with this one type, so a failure says
//! what kind it is (an argument to fix, a refusal to take up with the user, something missing, a
//! peer that failed, a limit) as well as what happened. The text shown is the message itself;
//! the variant is for code that branches on the kind.

use std::fmt;

/// Why a built-in tool call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// An argument the model gave cannot be used: which one, and why.
    #[error("{}", argument_message(field, reason))]
    InvalidArgument {
        /// The argument's name, as in the tool's schema (`path`, `query`, `items[2].name`).
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An input that is not a single argument is wrong (a combination of arguments, a
    /// specification or expression the model wrote); the message says what and how to fix it.
    #[error("{0}")]
    Invalid(String),
    /// Refused on purpose: what was refused and why (a setting, a rule, the guard, a policy).
    #[error("{0}")]
    Refused(String),
    /// What the call names does not exist (a file, a record, a bucket, a process).
    #[error("{0}")]
    NotFound(String),
    /// A peer the tool depends on failed (a server, an engine, a program, the file system),
    /// with its cause.
    #[error("{0}")]
    Peer(String),
    /// A limit was reached (size, time, count, rate).
    #[error("{0}")]
    Limit(String),
    /// What the tool read back cannot be used (a document that does not parse, an answer of
    /// the wrong shape).
    #[error("{0}")]
    Unreadable(String),
}

/// The message of an invalid argument: the reason alone when it already names the argument
/// (`offset 9 is past the end ...`), else the argument's name in front of it.
fn argument_message(field: &str, reason: &str) -> String {
    if reason.contains(field) {
        reason.to_owned()
    } else {
        format!("invalid argument `{field}`: {reason}")
    }
}

impl ToolError {
    /// An invalid argument `field`, because `reason`.
    pub fn invalid_argument(field: impl Into<String>, reason: impl fmt::Display) -> ToolError {
        ToolError::InvalidArgument {
            field: field.into(),
            reason: reason.to_string(),
        }
    }

    /// An invalid input (not one argument), as `message` says.
    pub fn invalid(message: impl fmt::Display) -> ToolError {
        ToolError::Invalid(message.to_string())
    }

    /// A refusal, `why` saying what and why.
    pub fn refused(why: impl fmt::Display) -> ToolError {
        ToolError::Refused(why.to_string())
    }

    /// Something named that does not exist.
    pub fn not_found(message: impl fmt::Display) -> ToolError {
        ToolError::NotFound(message.to_string())
    }

    /// A peer's failure, `cause` naming the peer and what it said.
    pub fn peer(cause: impl fmt::Display) -> ToolError {
        ToolError::Peer(cause.to_string())
    }

    /// A limit reached.
    pub fn limit(message: impl fmt::Display) -> ToolError {
        ToolError::Limit(message.to_string())
    }

    /// Something read back that cannot be used.
    pub fn unreadable(message: impl fmt::Display) -> ToolError {
        ToolError::Unreadable(message.to_string())
    }

    /// The same kind of failure with `context` in front of its message (`"{context}: {message}"`),
    /// for a helper's error passed up by a caller that knows more.
    pub fn context(self, context: impl fmt::Display) -> ToolError {
        let with = |message: String| format!("{context}: {message}");
        match self {
            ToolError::InvalidArgument { field, reason } => ToolError::InvalidArgument {
                field,
                reason: with(reason),
            },
            ToolError::Invalid(m) => ToolError::Invalid(with(m)),
            ToolError::Refused(m) => ToolError::Refused(with(m)),
            ToolError::NotFound(m) => ToolError::NotFound(with(m)),
            ToolError::Peer(m) => ToolError::Peer(with(m)),
            ToolError::Limit(m) => ToolError::Limit(with(m)),
            ToolError::Unreadable(m) => ToolError::Unreadable(with(m)),
        }
    }
}

/// A workspace failure as the tool reports it: a refusal of the scope (outside, a symlink out,
/// not granted, protected) stays a refusal, a missing file is not found, a limit a limit, and
/// the file system's own failure is a peer's.
impl From<cairn_workspace::ScopeError> for ToolError {
    fn from(e: cairn_workspace::ScopeError) -> ToolError {
        use cairn_workspace::ScopeError as S;
        let message = e.to_string();
        match e {
            _ if e.is_denial() => ToolError::Refused(message),
            S::NotFound { .. } => ToolError::NotFound(message),
            S::TooLarge { .. } => ToolError::Limit(message),
            S::Io { .. } => ToolError::Peer(message),
            S::Binary { .. } | S::InvalidUtf8 { .. } => ToolError::Unreadable(message),
            _ => ToolError::Invalid(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ToolError;

    #[test]
    fn the_message_is_what_the_model_reads() {
        assert_eq!(
            ToolError::invalid_argument("path", "must be relative").to_string(),
            "invalid argument `path`: must be relative"
        );
        assert_eq!(
            ToolError::invalid_argument("line", "line 9 is out of range").to_string(),
            "line 9 is out of range"
        );
        assert_eq!(
            ToolError::refused("writes are off").to_string(),
            "writes are off"
        );
        assert_eq!(
            ToolError::peer("connection refused")
                .context("PostgreSQL")
                .to_string(),
            "PostgreSQL: connection refused"
        );
        assert!(matches!(
            ToolError::limit("too big").context("x"),
            ToolError::Limit(m) if m == "x: too big"
        ));
    }

    #[test]
    fn a_workspace_refusal_stays_a_refusal_and_keeps_its_words() {
        use cairn_workspace::ScopeError;
        let outside = ScopeError::OutsideWorkspace {
            requested: "../x".into(),
            resolved: "/x".into(),
        };
        let shown = outside.to_string();
        assert_eq!(ToolError::from(outside), ToolError::Refused(shown));
        let missing = ScopeError::NotFound {
            path: "/w/a.txt".into(),
        };
        assert_eq!(
            ToolError::from(missing),
            ToolError::NotFound("/w/a.txt does not exist".into())
        );
    }
}
