//! Email: sending over SMTP (TLS or STARTTLS, never plain text to a remote host) and reading over IMAP, through connections the web guard vetted.
