//! The one way these tools ask the model: a request with no tools, the user text redacted and
//! bounded, the answer streamed to its end (or cancelled), and the tokens counted.

use cairn_agent::model::{ImageInput, Message, ModelEvent, ModelRequest, Usage};
use cairn_agent::tools::attach_usage;
use cairn_toolkit::CallContext;
use futures::StreamExt;
use rmcp::model::CallToolResult;

use crate::ml::Ml;

/// Most characters of input a tool sends: about 30,000 tokens, which every current model takes
/// with room for the answer. Longer input is cut, and the result says so.
pub(super) const MAX_INPUT_CHARS: usize = 120_000;

/// Most bytes of an answer kept: a model that does not stop is cut here.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The model's answer and what it cost.
pub(super) struct Answer {
    pub(super) text: String,
    pub(super) usage: Usage,
}

/// Why a request did not give an answer, with the tokens spent before it failed.
pub(super) struct Failed {
    pub(super) why: String,
    pub(super) usage: Usage,
}

impl From<String> for Failed {
    fn from(why: String) -> Failed {
        Failed {
            why,
            usage: Usage::default(),
        }
    }
}

/// `text`, cut to [`MAX_INPUT_CHARS`] characters; the note says what was left out.
pub(super) fn bounded(text: &str) -> (String, Option<String>) {
    match text.char_indices().nth(MAX_INPUT_CHARS) {
        None => (text.to_owned(), None),
        Some((at, _)) => (
            text[..at].to_owned(),
            Some(format!(
                "Only the first {MAX_INPUT_CHARS} characters of {} were sent to the model.",
                text.chars().count()
            )),
        ),
    }
}

/// One completion from the agent's model: `system`, then `user` (redacted) with `images`.
pub(super) async fn ask(
    ml: &Ml,
    cx: &CallContext,
    system: &str,
    user: &str,
    images: Vec<ImageInput>,
) -> Result<Answer, Failed> {
    let Some(model) = ml.model.get() else {
        return Err(
            "no model is set up for this tool: it asks the agent's model, which is there in a chat \
             turn (the editor, `cairn chat`), not in `cairn tools call`"
                .to_owned()
                .into(),
        );
    };
    if !images.is_empty() && !model.accepts_images() {
        return Err(format!(
            "{} does not read pictures (as far as cairn knows): use a model that does (Claude, \
             GPT-4o, GPT-4.1, ...), or set `provider.images = true` if this one does",
            model.describe()
        )
        .into());
    }
    let user = match &ml.redactor {
        Some(r) => r.redact(user),
        None => user.to_owned(),
    };
    let request = ModelRequest {
        system: system.to_owned(),
        messages: vec![Message::User { text: user, images }],
        tools: Vec::new(),
    };
    let mut usage = Usage::default();
    let streamed = async {
        let mut stream = model.stream(request).await.map_err(|e| e.to_string())?;
        let mut text = String::new();
        while let Some(event) = stream.next().await {
            match event.map_err(|e| e.to_string())? {
                ModelEvent::TextDelta(delta) => {
                    text.push_str(&delta);
                    if text.len() > MAX_ANSWER_BYTES {
                        let mut at = MAX_ANSWER_BYTES;
                        while !text.is_char_boundary(at) {
                            at -= 1;
                        }
                        text.truncate(at);
                        text.push_str("\n[cut: the answer passed 256 KiB]");
                        break;
                    }
                }
                // No tools were offered, so a call is not run.
                ModelEvent::ToolCall(_) => {}
                ModelEvent::Usage(u) => usage += u,
                ModelEvent::Finished { .. } => break,
            }
        }
        Ok::<String, String>(text)
    };
    let text = tokio::select! {
        _ = cx.cancel.cancelled() => Err("cancelled".to_owned()),
        text = streamed => text,
    };
    match text {
        Ok(text) => Ok(Answer { text, usage }),
        Err(why) => Err(Failed { why, usage }),
    }
}

/// `result` with the tokens spent on it, for the turn's usage.
pub(super) fn counted(result: CallToolResult, usage: Usage) -> CallToolResult {
    if usage == Usage::default() {
        result
    } else {
        attach_usage(result, usage)
    }
}

/// A failure as the model reads it, with the tokens spent counted.
pub(super) fn failed(f: Failed) -> CallToolResult {
    counted(cairn_toolkit::reply::error(f.why), f.usage)
}
