//! `api_from_curl`: a `curl ...` command line parsed into a request (method, URL, headers,
//! body) that then runs like `api_request`.
//!
//! Words are split as a POSIX shell would (single and double quotes, backslashes, line
//! continuations); nothing is expanded: `$TOKEN` stays that text. Options that would read files
//! (`-d @file`, `-T`), hand a password over (`-u`), or turn TLS checks off (`-k`) are refused
//! with the reason, since the request goes through the web guard and credentials come from the
//! vault by name.

use serde_json::{Map, Value};

/// A parsed curl command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CurlRequest {
    pub method: String,
    pub url: String,
    /// `(name, value)` in the order given.
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    /// Options that were accepted but change nothing here, to tell the user.
    pub ignored: Vec<String>,
}

impl CurlRequest {
    /// The headers as the `headers` object other tools take (a repeated name keeps the last).
    pub fn header_object(&self) -> Map<String, Value> {
        self.headers
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect()
    }

    /// The request as shown to the user before it runs.
    pub fn describe(&self) -> String {
        let mut out = format!("{} {}\n", self.method, self.url);
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\n"));
        }
        if let Some(body) = &self.body {
            out.push_str(&format!("body: {body}\n"));
        }
        for i in &self.ignored {
            out.push_str(&format!("(ignored: {i})\n"));
        }
        out
    }
}

/// Splits a command line into words like a POSIX shell, without expansion.
pub fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(ch) => word.push(ch),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                // A line continuation.
                Some('\n') => {}
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                }
                Some(ch) => {
                    in_word = true;
                    word.push(ch);
                }
                None => {}
            },
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Options taking no value that are fine to ignore, with why.
fn ignorable(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "-s"
        | "--silent"
        | "-S"
        | "--show-error"
        | "-v"
        | "--verbose"
        | "-i"
        | "--include"
        | "--fail"
        | "-f"
        | "--fail-with-body"
        | "--no-progress-meter"
        | "-#"
        | "--progress-bar" => "output options do not apply",
        "-L" | "--location" => "redirects are always followed by the web guard (at most 5)",
        "--compressed" => "bodies are never decompressed by the web guard",
        "-g" | "--globoff" => "URLs are never globbed here",
        _ => return None,
    })
}

/// Parses `curl ...`.
pub fn parse_curl(command: &str) -> Result<CurlRequest, String> {
    let words = shell_words(command)?;
    let mut iter = words.into_iter().peekable();
    match iter.next() {
        Some(first) if first == "curl" || first.ends_with("/curl") => {}
        _ => return Err("the command must start with curl".into()),
    }
    let mut req = CurlRequest::default();
    let mut method: Option<String> = None;
    let mut data: Vec<String> = Vec::new();
    let mut get = false;
    let mut head = false;
    let mut json = false;
    let mut urls: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    // Split combined short flags (`-sSL`) and attached values (`-XPOST`, `-H'A: b'`).
    for w in iter.by_ref() {
        if w.starts_with('-') && !w.starts_with("--") && w.len() > 2 {
            let flag = &w[..2];
            let rest = &w[2..];
            if matches!(
                flag,
                "-X" | "-H" | "-d" | "-u" | "-A" | "-e" | "-b" | "-o" | "-T" | "-F"
            ) {
                words.push(flag.to_owned());
                words.push(rest.to_owned());
            } else {
                words.extend(w.chars().skip(1).map(|c| format!("-{c}")));
            }
        } else {
            words.push(w);
        }
    }
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .ok_or_else(|| format!("curl option {flag} needs a value"))
        };
        match w.as_str() {
            "-X" | "--request" => method = Some(value(&w)?.to_ascii_uppercase()),
            "-H" | "--header" => {
                let line = value(&w)?;
                let Some((name, v)) = line.split_once(':') else {
                    return Err(format!("header {line:?} has no colon"));
                };
                req.headers
                    .push((name.trim().to_owned(), v.trim().to_owned()));
            }
            "-d" | "--data" | "--data-ascii" | "--data-binary" => {
                let d = value(&w)?;
                if d.starts_with('@') {
                    return Err(format!(
                        "{w} {d}: reading a file is not supported; put the data inline"
                    ));
                }
                data.push(d);
            }
            "--data-raw" => data.push(value(&w)?),
            "--data-urlencode" => {
                let d = value(&w)?;
                let encoded = match d.split_once('=') {
                    Some((name, v)) => format!("{name}={}", urlencode(v)),
                    None => urlencode(&d),
                };
                data.push(encoded);
            }
            "--json" => {
                let d = value(&w)?;
                if d.starts_with('@') {
                    return Err(
                        "--json @file: reading a file is not supported; put the JSON inline".into(),
                    );
                }
                data.push(d);
                json = true;
            }
            "-u" | "--user" => {
                return Err("-u/--user is not supported: store the password in the vault (cairn vault set NAME --host HOST) and pass auth {\"secret\": NAME, \"scheme\": \"basic\", \"name\": USER}".into());
            }
            "-k" | "--insecure" => {
                return Err(
                    "-k/--insecure is not supported: TLS certificates are always verified".into(),
                );
            }
            "-F" | "--form" => {
                return Err("-F/--form (multipart) is not supported; use api_form_post for url-encoded forms".into());
            }
            "-T" | "--upload-file" | "-o" | "--output" | "-O" | "--remote-name" | "-K"
            | "--config" => {
                return Err(format!(
                    "curl option {w} reads or writes files and is not supported"
                ));
            }
            "-G" | "--get" => get = true,
            "-I" | "--head" => head = true,
            "-A" | "--user-agent" => req.headers.push(("User-Agent".into(), value(&w)?)),
            "-e" | "--referer" => req.headers.push(("Referer".into(), value(&w)?)),
            "-b" | "--cookie" => {
                let c = value(&w)?;
                if !c.contains('=') {
                    return Err(format!("-b {c}: reading a cookie file is not supported"));
                }
                req.headers.push(("Cookie".into(), c));
            }
            "--url" => urls.push(value(&w)?),
            "-m" | "--max-time" | "--connect-timeout" | "--retry" => {
                let v = value(&w)?;
                req.ignored
                    .push(format!("{w} {v}: the web guard's timeouts apply"));
            }
            flag if flag.starts_with('-') && flag.len() > 1 => match ignorable(flag) {
                Some(why) => req.ignored.push(format!("{flag}: {why}")),
                None => return Err(format!("curl option {flag} is not supported")),
            },
            _ => urls.push(w),
        }
    }
    let url = match urls.as_slice() {
        [one] => one.clone(),
        [] => return Err("no URL in the curl command".into()),
        _ => return Err("the curl command names more than one URL; give one".into()),
    };
    let joined = (!data.is_empty()).then(|| data.join("&"));
    if json {
        let has = |headers: &[(String, String)], n: &str| {
            headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n))
        };
        if !has(&req.headers, "content-type") {
            req.headers
                .push(("Content-Type".into(), "application/json".into()));
        }
        if !has(&req.headers, "accept") {
            req.headers
                .push(("Accept".into(), "application/json".into()));
        }
    } else if joined.is_some()
        && !get
        && !req
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        // What curl sends with -d.
        req.headers.push((
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into(),
        ));
    }
    req.url = url;
    if get {
        if let Some(q) = joined {
            let sep = if req.url.contains('?') { '&' } else { '?' };
            req.url = format!("{}{sep}{q}", req.url);
        }
        req.method = method.unwrap_or_else(|| "GET".into());
    } else {
        req.method = method.unwrap_or_else(|| {
            if head {
                "HEAD".into()
            } else if joined.is_some() {
                "POST".into()
            } else {
                "GET".into()
            }
        });
        req.body = joined;
    }
    Ok(req)
}

/// Percent-encodes everything but RFC 3986's unreserved characters (space as `%20`).
pub fn urlencode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
