//! Public tool names. Model providers accept `[A-Za-z0-9_-]{1,64}` (OpenAI's limit, the
//! strictest we target), while MCP servers may use `[A-Za-z0-9_.-]{1,128}` (rmcp's tool-name
//! SEP). External tools are named `server__tool`, sanitised and made unique here, and can never
//! take a built-in's name, so a server cannot shadow a trusted tool (SECURITY.md F8).

use std::collections::HashSet;

/// Longest name model providers accept.
pub const MAX_PUBLIC_NAME: usize = 64;
/// Longest tool name the MCP SEP allows from a server.
pub const MAX_SERVER_TOOL_NAME: usize = 128;
/// Separator between the server and the tool in a public name.
pub const SEPARATOR: &str = "__";

/// Whether a tool name sent by a server follows the SEP (`[A-Za-z0-9_.-]{1,128}`). Names outside it
/// (spaces, homoglyphs, 300 characters) are rejected rather than repaired: repairing would let
/// `reаd_file` (Cyrillic a) pass as `read_file`.
pub fn is_valid_server_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SERVER_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Maps every character outside `[A-Za-z0-9_-]` to `_`; an empty result becomes `_`.
pub fn sanitize(raw: &str) -> String {
    let s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_owned() } else { s }
}

/// Cuts `s` (ASCII after [`sanitize`]) to at most `max` bytes.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Hands out public names, each unique and none equal to a reserved (built-in) name.
#[derive(Debug, Default, Clone)]
pub struct NameTable {
    taken: HashSet<String>,
}

impl NameTable {
    /// A table where `reserved` names are already taken.
    pub fn new<I, S>(reserved: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            taken: reserved.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether `name` is taken.
    pub fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// Takes `name` exactly if it is free; built-in tools use this, as their names are plain.
    pub fn take_exact(&mut self, name: &str) -> bool {
        self.taken.insert(name.to_owned())
    }

    /// The public name for `tool` of `server`: `server__tool`, sanitised, cut to 64 characters,
    /// and suffixed `_2`, `_3`, ... when it collides with a name already handed out.
    pub fn allocate(&mut self, server: &str, tool: &str) -> String {
        let base = sanitize(&format!("{server}{SEPARATOR}{tool}"));
        let base = cut(&base, MAX_PUBLIC_NAME).to_owned();
        if self.taken.insert(base.clone()) {
            return base;
        }
        for n in 2u32.. {
            let suffix = format!("_{n}");
            let candidate = format!("{}{suffix}", cut(&base, MAX_PUBLIC_NAME - suffix.len()));
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
        // `2u32..` only ends after four billion collisions, which a catalog never has.
        base
    }
}
