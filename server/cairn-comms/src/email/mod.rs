//! Email: sending over SMTP (TLS or STARTTLS, never plain text to a remote host) and reading over
//! IMAP, through connections the web guard vetted.
//!
//! `conn.rs` turns `[comms.email]` into a vetted, TLS-wrapped stream (the password from the
//! vault, bound to the server's host); `smtp.rs` is a small SMTP client over it and `compose.rs`
//! builds the message (refusing header injection); `imap.rs` opens an IMAP session and shapes
//! what the reading tools show. One tool per file.

mod compose;
mod conn;
mod imap;
mod smtp;

pub(crate) mod email_folders;
pub(crate) mod email_move;
pub(crate) mod email_read;
pub(crate) mod email_search;
pub(crate) mod email_send;
