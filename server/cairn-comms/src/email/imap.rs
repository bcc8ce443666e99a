//! An IMAP session on the configured server (STARTTLS where the config says so, then LOGIN with
//! the vault's password), and what the reading tools share: quoting, UID sets, one-line
//! summaries of messages.

use async_imap::{Client, Session};
use cairn_toolkit::ToolError;

use super::conn::{Mail, Security, Stream};

/// An open, logged-in session.
pub(crate) type Imap = Session<Stream>;

/// Opens a session as the config's user.
pub(crate) async fn open(mail: &Mail<'_>) -> Result<Imap, ToolError> {
    let server = mail.server("imap")?;
    let password = mail.password(&server)?;
    let shown = format!("{}:{}", server.host, server.port);
    let stream = mail.dial(&server).await?;
    let mut client = Client::new(stream);
    let lost = |e: std::io::Error| ToolError::peer(format!("{shown}: {e}"));
    if client.read_response().await.map_err(lost)?.is_none() {
        return Err(ToolError::peer(format!(
            "{shown}: the server closed the connection"
        )));
    }
    if server.security == Security::StartTls {
        client
            .run_command_and_check_ok("STARTTLS", None)
            .await
            .map_err(|e| {
                ToolError::peer(format!(
                    "{shown}: STARTTLS failed ({e}), and imap:// requires it; nothing was sent \
                     (use imaps:// if the server speaks TLS from the start)"
                ))
            })?;
        // Anything buffered after the OK came before TLS and is dropped with the client.
        let Stream::Plain(tcp) = client.into_inner() else {
            return Err(ToolError::peer(format!("{shown}: TLS was already on")));
        };
        client = Client::new(mail.tls(tcp, &server).await?);
    }
    let user = &mail.settings.username;
    client
        .login(user, password.expose())
        .await
        .map_err(|(e, _)| {
            ToolError::peer(format!(
                "{shown}: the server refused the login of `{user}` ({e}): check the user name and \
                 the vault secret `{}`",
                mail.settings.password_secret
            ))
        })
}

/// Logs out, ignoring a server that has already gone.
pub(crate) async fn close(mut session: Imap) {
    let _ = session.logout().await;
}

/// `text` as an IMAP quoted string; refused when it holds a line break or NUL (which would end
/// the command and start another).
// `invalid`, not `invalid_argument`: the text is a folder or a search term, and the message
// (which the model reads as is) names the value, not the argument.
pub(crate) fn quote(text: &str) -> Result<String, ToolError> {
    if let Some(c) = text.chars().find(|c| matches!(c, '\r' | '\n' | '\0')) {
        return Err(ToolError::invalid(format!(
            "{text:?} is refused: it holds {c:?}, which would end the IMAP command"
        )));
    }
    Ok(format!(
        "\"{}\"",
        text.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

/// A folder name as the model gave it, checked.
pub(crate) fn folder(name: Option<&str>) -> Result<String, ToolError> {
    if let Some(n) = name {
        quote(n)?;
    }
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("INBOX");
    if name.len() > 500 {
        return Err(ToolError::limit("a folder name longer than 500 bytes"));
    }
    Ok(name.to_owned())
}

/// `uids` as an IMAP UID set (`3,7,9`).
pub(crate) fn uid_set(uids: &[u32]) -> String {
    uids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The name and address of the first mailbox in an address header, as one short string.
pub(crate) fn first_address(addr: Option<&mail_parser::Address<'_>>) -> String {
    let Some(a) = addr.and_then(|a| a.first()) else {
        return String::new();
    };
    match (a.name(), a.address()) {
        (Some(n), Some(e)) => format!("{n} <{e}>"),
        (None, Some(e)) => e.to_owned(),
        (Some(n), None) => n.to_owned(),
        (None, None) => String::new(),
    }
}

/// Every mailbox in an address header, comma-separated.
pub(crate) fn all_addresses(addr: Option<&mail_parser::Address<'_>>) -> String {
    let Some(addr) = addr else {
        return String::new();
    };
    addr.iter()
        .map(|a| match (a.name(), a.address()) {
            (Some(n), Some(e)) => format!("{n} <{e}>"),
            (None, Some(e)) => e.to_owned(),
            (Some(n), None) => n.to_owned(),
            (None, None) => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Control characters (a header could carry escape sequences) as spaces.
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_and_refuses_line_breaks() {
        assert_eq!(quote(r#"a "b" \c"#).as_deref(), Ok(r#""a \"b\" \\c""#));
        assert!(quote("x\r\nA1 DELETE INBOX").is_err());
        assert_eq!(folder(None).as_deref(), Ok("INBOX"));
        assert!(folder(Some("Archive\n")).is_err());
        assert_eq!(uid_set(&[3, 7]), "3,7");
    }
}
