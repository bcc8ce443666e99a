//! A small SMTP client over a stream the guard dialled: EHLO, STARTTLS (required where the
//! config says so, and nothing read before it is kept), AUTH PLAIN or LOGIN, one envelope, DATA
//! with dot-stuffing, QUIT. Replies are read in bounded lines.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use cairn_toolkit::ToolError;
use cairn_vault::Secret;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use super::conn::{Mail, Security, Server, Stream};

/// The longest reply line read.
const MAX_LINE: u64 = 4096;
/// The most lines of one (multi-line) reply.
const MAX_LINES: usize = 100;

/// An SMTP conversation.
struct Smtp {
    io: BufReader<Stream>,
    host: String,
}

/// One reply: its code and its text lines.
struct Reply {
    code: u16,
    lines: Vec<String>,
}

impl Reply {
    fn text(&self) -> String {
        self.lines.join(" ")
    }
}

impl Smtp {
    async fn reply(&mut self) -> Result<Reply, ToolError> {
        let mut lines = Vec::new();
        loop {
            let mut buf = Vec::new();
            (&mut self.io)
                .take(MAX_LINE)
                .read_until(b'\n', &mut buf)
                .await
                .map_err(|e| ToolError::peer(format!("{}: reading the reply: {e}", self.host)))?;
            if buf.is_empty() {
                return Err(ToolError::peer(format!(
                    "{}: the server closed the connection",
                    self.host
                )));
            }
            let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
            let code = line
                .get(..3)
                .and_then(|c| c.parse::<u16>().ok())
                .ok_or_else(|| {
                    ToolError::peer(format!("{}: not an SMTP reply: {line:?}", self.host))
                })?;
            let last = line.as_bytes().get(3) != Some(&b'-');
            lines.push(line.get(4..).unwrap_or("").to_owned());
            if last {
                return Ok(Reply { code, lines });
            }
            if lines.len() > MAX_LINES {
                return Err(ToolError::peer(format!(
                    "{}: a reply of more than {MAX_LINES} lines",
                    self.host
                )));
            }
        }
    }

    async fn send(&mut self, line: &str) -> Result<(), ToolError> {
        let io = self.io.get_mut();
        io.write_all(line.as_bytes())
            .await
            .and(io.write_all(b"\r\n").await)
            .and(io.flush().await)
            .map_err(|e| ToolError::peer(format!("{}: writing: {e}", self.host)))
    }

    /// Sends `line` (shown as `shown` in errors) and expects a reply code in `ok`.
    async fn command(&mut self, line: &str, shown: &str, ok: &[u16]) -> Result<Reply, ToolError> {
        self.send(line).await?;
        let reply = self.reply().await?;
        if ok.contains(&reply.code) {
            Ok(reply)
        } else {
            Err(ToolError::peer(format!(
                "{}: the server answered {shown} with {} {}",
                self.host,
                reply.code,
                reply.text()
            )))
        }
    }

    async fn ehlo(&mut self) -> Result<Vec<String>, ToolError> {
        let reply = self.command("EHLO cairn.localhost", "EHLO", &[250]).await?;
        Ok(reply
            .lines
            .iter()
            .skip(1)
            .map(|l| l.to_ascii_uppercase())
            .collect())
    }
}

/// The envelope and content of one send.
pub(crate) struct Envelope<'a> {
    pub from: &'a str,
    /// Every recipient: to, cc and bcc.
    pub recipients: &'a [String],
    pub message: &'a [u8],
}

/// Sends `envelope` through `server`, logging in as the config's user with `password`.
pub(crate) async fn send(
    mail: &Mail<'_>,
    server: &Server,
    password: &Secret,
    envelope: &Envelope<'_>,
) -> Result<String, ToolError> {
    let stream = mail.dial(server).await?;
    let mut s = Smtp {
        io: BufReader::new(stream),
        host: format!("{}:{}", server.host, server.port),
    };
    let greeting = s.reply().await?;
    if greeting.code != 220 {
        return Err(ToolError::peer(format!(
            "{}: the server refused the session: {} {}",
            s.host,
            greeting.code,
            greeting.text()
        )));
    }
    let mut caps = s.ehlo().await?;
    if server.security == Security::StartTls {
        if !caps.iter().any(|c| c == "STARTTLS") {
            // Refused here, by the rule that smtp:// is STARTTLS or nothing.
            return Err(ToolError::refused(format!(
                "{}: the server does not offer STARTTLS, and smtp:// requires it; nothing was sent \
                 (use smtps:// if the server speaks TLS from the start)",
                s.host
            )));
        }
        s.command("STARTTLS", "STARTTLS", &[220]).await?;
        // Anything the server sent past its 220 came before TLS: refuse it rather than read it
        // as if it were protected (STARTTLS command injection).
        if !s.io.buffer().is_empty() {
            return Err(ToolError::refused(format!(
                "{}: the server sent data before the TLS handshake; refused",
                s.host
            )));
        }
        let Stream::Plain(tcp) = s.io.into_inner() else {
            return Err(ToolError::peer(format!("{}: TLS was already on", s.host)));
        };
        s.io = BufReader::new(mail.tls(tcp, server).await?);
        caps = s.ehlo().await?;
    }
    let auth: Vec<&str> = caps
        .iter()
        .filter_map(|c| c.strip_prefix("AUTH").map(str::trim))
        .flat_map(|m| m.split([' ', '=']))
        .collect();
    let user = &mail.settings.username;
    let refused = |e: ToolError| {
        ToolError::peer(format!(
            "{e}; the server refused the login of `{user}`: check the user name and the vault secret `{}`",
            mail.settings.password_secret
        ))
    };
    if auth.contains(&"PLAIN") {
        let token = STANDARD.encode(format!("\0{user}\0{}", password.expose()));
        s.command(&format!("AUTH PLAIN {token}"), "AUTH PLAIN", &[235])
            .await
            .map_err(refused)?;
    } else if auth.contains(&"LOGIN") {
        s.command("AUTH LOGIN", "AUTH LOGIN", &[334]).await?;
        s.command(&STANDARD.encode(user), "the user name", &[334])
            .await
            .map_err(refused)?;
        s.command(&STANDARD.encode(password.expose()), "the password", &[235])
            .await
            .map_err(refused)?;
    } else {
        return Err(ToolError::peer(format!(
            "{}: the server offers neither AUTH PLAIN nor AUTH LOGIN; nothing was sent",
            s.host
        )));
    }
    s.command(
        &format!("MAIL FROM:<{}>", envelope.from),
        "MAIL FROM",
        &[250],
    )
    .await?;
    for r in envelope.recipients {
        s.command(
            &format!("RCPT TO:<{r}>"),
            &format!("RCPT TO {r}"),
            &[250, 251],
        )
        .await?;
    }
    s.command("DATA", "DATA", &[354]).await?;
    let mut data = Vec::with_capacity(envelope.message.len() + 1024);
    for line in envelope.message.split_inclusive(|b| *b == b'\n') {
        if line.first() == Some(&b'.') {
            data.push(b'.');
        }
        data.extend_from_slice(line);
    }
    if !data.ends_with(b"\r\n") {
        data.extend_from_slice(b"\r\n");
    }
    data.extend_from_slice(b".");
    let io = s.io.get_mut();
    io.write_all(&data)
        .await
        .map_err(|e| ToolError::peer(format!("{}: writing the message: {e}", s.host)))?;
    let accepted = s.command("", "the message", &[250]).await?;
    // The message is accepted; a failing QUIT changes nothing.
    let _ = s.send("QUIT").await;
    Ok(accepted.text())
}
