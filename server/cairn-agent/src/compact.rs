//! Compaction: when a request would overflow the model's context window, the older turns of the
//! session are summarised by the model into one compact record (the task, decisions, files
//! touched, open questions) that stands in for them; the session store keeps both.

use futures::StreamExt;

use crate::model::{Message, ModelClient, ModelEvent, ModelRequest, Usage};

/// The estimate lives with `ModelClient::count_tokens`, whose default it is; named here too, where
/// the fronts have always found it.
pub use crate::model::estimate_tokens;

/// A request is compacted once it would take more than this share of the window, leaving the
/// rest for the answer.
pub const TRIGGER_PERCENT: u64 = 85;
/// How much of the window the turns kept after a compaction may take.
const KEEP_PERCENT: u64 = 30;
/// Most characters of one tool result in the text given to the summariser.
const TOOL_RESULT_CHARS: usize = 1500;

/// What the summariser is told.
const SUMMARY_PROMPT: &str = "You compact a conversation between a user and a coding agent \
so the agent can continue without it. Write a compact record, in Markdown, with these parts: \
## Task (what the user wants, in their words where it matters), ## Decisions (what was decided \
and why), ## Facts (names, numbers, paths, values the user or the tools gave that may be asked \
about later; keep them exact), ## Files touched (paths, and what changed), ## Open questions \
(what is unfinished). Leave out greetings and tool output that no longer matters. Write only the \
record.";

/// The user message that introduces a summary in the conversation.
pub const SUMMARY_INTRO: &str = "[cairn: the earlier part of this conversation was summarised \
to fit the model's context window; the summary follows as your message]";

/// The two messages that stand for the summarised turns.
pub fn summary_messages(summary: &str) -> [Message; 2] {
    [
        Message::User {
            text: SUMMARY_INTRO.to_owned(),
            images: Vec::new(),
        },
        Message::Assistant {
            text: summary.to_owned(),
            tool_calls: Vec::new(),
        },
    ]
}

/// Where to cut `history` so that the turns after the cut fit in the kept share of `window`:
/// always at the start of a turn (a user message), never between a call and its result.
/// `None` when there is nothing before the first turn worth keeping.
pub fn cut_point(
    model: &dyn ModelClient,
    system: &str,
    history: &[Message],
    window: u64,
    keep_nothing: bool,
) -> Option<usize> {
    if keep_nothing {
        return (!history.is_empty()).then_some(history.len());
    }
    let budget = window * KEEP_PERCENT / 100;
    let starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::User { .. }))
        .map(|(i, _)| i)
        .collect();
    // The latest start whose tail fits, keeping as much as fits; at least one turn goes.
    let mut cut = None;
    for &start in starts.iter().rev() {
        let tail = ModelRequest {
            system: system.to_owned(),
            messages: history[start..].to_vec(),
            tools: Vec::new(),
        };
        if model.count_tokens(&tail) > budget {
            break;
        }
        cut = Some(start);
    }
    match cut {
        Some(0) | None => starts
            .last()
            .copied()
            .filter(|&last| last > 0)
            .or((!history.is_empty()).then_some(history.len())),
        Some(c) => Some(c),
    }
    .filter(|&c| c > 0)
}

/// The transcript given to the summariser, cut to about `max_tokens`.
fn transcript(messages: &[Message], max_tokens: u64) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            Message::User { text, .. } => out.push_str(&format!("USER: {text}\n\n")),
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    out.push_str(&format!("AGENT: {text}\n\n"));
                }
                for c in tool_calls {
                    out.push_str(&format!("AGENT CALLS {}({})\n\n", c.name, c.arguments));
                }
            }
            Message::Tool {
                name,
                content,
                is_error,
                ..
            } => {
                let shown: String = content.chars().take(TOOL_RESULT_CHARS).collect();
                let more = if shown.len() < content.len() {
                    " […]"
                } else {
                    ""
                };
                let failed = if *is_error { " (failed)" } else { "" };
                out.push_str(&format!("RESULT of {name}{failed}: {shown}{more}\n\n"));
            }
        }
    }
    // Over the budget, the beginning (where the task was stated) and the end are kept.
    let max_chars = (max_tokens * 4) as usize;
    if out.len() > max_chars {
        let head = floor(&out, max_chars / 4);
        let tail = ceil(&out, out.len() - (max_chars - head));
        out = format!("{}\n[… middle left out …]\n{}", &out[..head], &out[tail..]);
    }
    out
}

fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Asks the model for the summary of `messages`; the summary and the tokens it took.
pub async fn summarise(
    model: &dyn ModelClient,
    messages: &[Message],
    window: u64,
) -> Result<(String, Usage), String> {
    let request = ModelRequest {
        system: SUMMARY_PROMPT.to_owned(),
        messages: vec![Message::User {
            text: transcript(messages, window * 6 / 10),
            images: Vec::new(),
        }],
        tools: Vec::new(),
    };
    let mut stream = model.stream(request).await.map_err(|e| e.to_string())?;
    let mut text = String::new();
    let mut usage = Usage::default();
    let mut finished = false;
    while let Some(event) = stream.next().await {
        match event.map_err(|e| e.to_string())? {
            ModelEvent::TextDelta(d) => text.push_str(&d),
            ModelEvent::Usage(u) => usage += u,
            ModelEvent::Finished { .. } => finished = true,
            ModelEvent::ToolCall(_) => {}
        }
    }
    if !finished || text.trim().is_empty() {
        return Err(format!(
            "{}: the summary came back empty or cut short",
            model.describe()
        ));
    }
    Ok((text.trim().to_owned(), usage))
}

/// The number of turns (user messages) in `messages`.
pub fn turns_in(messages: &[Message]) -> u32 {
    messages
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .count() as u32
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn user(t: &str) -> Message {
        Message::User {
            text: t.into(),
            images: Vec::new(),
        }
    }
    fn agent(t: &str) -> Message {
        Message::Assistant {
            text: t.into(),
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn the_transcript_keeps_its_beginning_and_end() {
        let long = "x".repeat(10_000);
        let messages = vec![
            user("the task: rename foo"),
            agent(&long),
            user("the last ask"),
        ];
        let t = transcript(&messages, 500);
        assert!(t.starts_with("USER: the task: rename foo"));
        assert!(t.contains("middle left out"));
        assert!(t.trim_end().ends_with("USER: the last ask"));
        assert!(t.len() <= 2100, "{}", t.len());
    }
}
