//! A tool result as the model and the editor get it: the text the model reads (other blocks
//! named, never passed), the pictures the editor may show, and the cut to
//! `agent.tool_result_max_bytes`.
//!
//! These are plain functions of a `CallToolResult`, apart from the loop, because the fronts use
//! them too (`cairn_agent::run` re-exports them).

use rmcp::model::{CallToolResult, ContentBlock};

use crate::events::Image;

/// Most bytes of base64 image data one result passes to the editor; a larger picture is named
/// in the text only.
const MAX_IMAGE_BASE64: usize = 4 * 1024 * 1024;

/// The raster pictures of a result, for the editor to show: PNG, JPEG, GIF or WebP, valid
/// base64 of a bounded size (never SVG, which can carry script).
pub fn images_of(result: &CallToolResult) -> Vec<Image> {
    let mut total = 0;
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(i) => Some(i),
            _ => None,
        })
        .filter(|i| {
            matches!(
                i.mime_type.as_str(),
                "image/png" | "image/jpeg" | "image/gif" | "image/webp"
            ) && i
                .data
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        })
        .take_while(|i| {
            total += i.data.len();
            total <= MAX_IMAGE_BASE64
        })
        .map(|i| Image {
            mime_type: i.mime_type.clone(),
            data: i.data.clone(),
        })
        .collect()
}

/// The text the model reads: text blocks joined; other blocks named.
pub fn result_text(result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!("[image {} omitted]", i.mime_type)),
            ContentBlock::Audio(a) => parts.push(format!("[audio {} omitted]", a.mime_type)),
            ContentBlock::Resource(_) => parts.push("[embedded resource omitted]".into()),
            ContentBlock::ResourceLink(r) => parts.push(format!("[resource {}]", r.uri)),
            _ => parts.push("[content omitted]".into()),
        }
    }
    if let (true, Some(s)) = (parts.is_empty(), &result.structured_content) {
        return s.to_string();
    }
    parts.join("\n")
}

/// Cuts `text` to `max` bytes on a character boundary, with a note that says so.
pub fn truncate(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cairn: output truncated from {} to {} bytes (agent.tool_result_max_bytes); ask for a smaller part]",
        &text[..end],
        text.len(),
        end
    )
}
