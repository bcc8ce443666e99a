//! `encode_decode`: base64 (standard and URL-safe), hex, URL percent-encoding and HTML entities,
//! either way; decoded bytes that are not UTF-8 are shown as hex.

use base64::Engine as _;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;

/// Bytes of input one call takes.
const MAX_INPUT: usize = 1024 * 1024;

/// The `encode_decode` tool.
pub struct EncodeDecode;

/// An encoding.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    Base64,
    Base64Url,
    Hex,
    Url,
    Html,
}

/// Which way.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Encode,
    Decode,
}

/// Arguments of `encode_decode`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The input text (at most 1 MiB).
    input: String,
    /// base64 (standard alphabet, padded; decoding accepts unpadded), base64_url (URL-safe `-_`,
    /// unpadded), hex (decoding ignores spaces, `:` and case), url (percent-encoding of a query
    /// component; decoding reads `+` as a space) or html (entities).
    encoding: Encoding,
    /// encode (text to its encoded form) or decode (back to text, or hex when not UTF-8).
    direction: Direction,
}

/// `input` encoded.
pub(crate) fn encode(input: &str, encoding: Encoding) -> String {
    match encoding {
        Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode(input),
        Encoding::Base64Url => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(input),
        Encoding::Hex => hex::encode(input),
        Encoding::Url => {
            const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
                .remove(b'-')
                .remove(b'.')
                .remove(b'_')
                .remove(b'~');
            percent_encoding::utf8_percent_encode(input, SET).to_string()
        }
        Encoding::Html => cairn_toolkit::html::escape(input),
    }
}

/// `input` decoded to bytes, or why not.
pub(crate) fn decode(input: &str, encoding: Encoding) -> Result<Vec<u8>, String> {
    let trimmed = input.trim();
    match encoding {
        Encoding::Base64 | Encoding::Base64Url => {
            let compact: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
            let unpadded = compact.trim_end_matches('=');
            let engine = if encoding == Encoding::Base64 {
                base64::engine::general_purpose::STANDARD_NO_PAD
            } else {
                base64::engine::general_purpose::URL_SAFE_NO_PAD
            };
            engine.decode(unpadded).map_err(|e| {
                let hint = if encoding == Encoding::Base64 && unpadded.contains(['-', '_']) {
                    " (it has `-` or `_`: try base64_url)"
                } else if encoding == Encoding::Base64Url && unpadded.contains(['+', '/']) {
                    " (it has `+` or `/`: try base64)"
                } else {
                    ""
                };
                format!("not valid base64: {e}{hint}")
            })
        }
        Encoding::Hex => {
            let compact: String = trimmed
                .trim_start_matches("0x")
                .chars()
                .filter(|c| !c.is_whitespace() && *c != ':')
                .collect();
            hex::decode(&compact).map_err(|e| format!("not valid hex: {e}"))
        }
        Encoding::Url => {
            // `+` is a space in query strings, where such text usually comes from.
            let spaced = input.replace('+', " ");
            Ok(percent_encoding::percent_decode_str(&spaced).collect())
        }
        Encoding::Html => Ok(html_decode(input).into_bytes()),
    }
}

fn html_decode(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let tail = rest.get(at..).unwrap_or_default();
        // Entities are short; a `;` further away means this `&` is literal.
        let end = tail.get(..tail.len().min(12)).and_then(|t| t.find(';'));
        let decoded = end.and_then(|end| {
            let name = tail.get(1..end)?;
            let c = if let Some(num) = name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                char::from_u32(u32::from_str_radix(num, 16).ok()?)?
            } else if let Some(num) = name.strip_prefix('#') {
                char::from_u32(num.parse().ok()?)?
            } else {
                match name {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    "nbsp" => '\u{a0}',
                    "copy" => '©',
                    "reg" => '®',
                    "euro" => '€',
                    "hellip" => '…',
                    "mdash" => '—',
                    "ndash" => '–',
                    _ => return None,
                }
            };
            Some((c, end + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = tail.get(len..).unwrap_or_default();
            }
            None => {
                out.push('&');
                rest = tail.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

impl Tool for EncodeDecode {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "encode_decode";
    const TITLE: &'static str = "Encode or decode";
    const DESCRIPTION: &'static str = "Encode text to, or decode it from, base64 (standard or URL-safe), hex, URL percent-encoding or HTML entities; decoded bytes that are not UTF-8 text are shown as hex. Input up to 1 MiB.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        if args.input.len() > MAX_INPUT {
            return error(format!(
                "the input is {} bytes, over the {MAX_INPUT}-byte cap: split it",
                args.input.len()
            ));
        }
        match args.direction {
            Direction::Encode => text(encode(&args.input, args.encoding)),
            Direction::Decode => match decode(&args.input, args.encoding) {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(s) => text(s),
                    Err(e) => {
                        let bytes = e.into_bytes();
                        text(format!(
                            "(binary: {} bytes, not UTF-8 text; shown as hex)\n{}",
                            bytes.len(),
                            hex::encode(&bytes)
                        ))
                    }
                },
                Err(e) => error(e),
            },
        }
    }
}
