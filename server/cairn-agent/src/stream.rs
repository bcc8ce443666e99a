//! One model answer, streamed: the text goes to the editor as it comes (a word at a time when
//! there is a redactor), the tool calls and the usage are collected, and a stream that ends
//! before the provider said it finished is an error, never a cut answer taken as whole.

use futures::StreamExt;

use crate::events::RunEvent;
use crate::model::{ModelEvent, ModelRequest, ToolCallRequest, Usage};
use crate::run::Agent;

/// How much of the model's text may wait for the end of a word before it is shown anyway.
const MAX_HELD_TEXT: usize = 4096;

/// One model answer, whole.
#[derive(Default)]
pub(crate) struct ModelTurn {
    pub text: String,
    pub calls: Vec<ToolCallRequest>,
    pub usage: Usage,
    /// The provider refused (the answer may be cut).
    pub refused: bool,
}

/// The model's text on its way to the editor. With a redactor it goes a word at a time: a
/// credential split across deltas is whole when it is redacted.
struct Held<'e, E: Fn(RunEvent)> {
    text: String,
    by_word: bool,
    emit: &'e E,
}

impl<E: Fn(RunEvent)> Held<'_, E> {
    fn push(&mut self, delta: String) {
        if !self.by_word {
            (self.emit)(RunEvent::Text { delta });
            return;
        }
        self.text.push_str(&delta);
        let cut = self
            .text
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map(|(i, c)| i + c.len_utf8());
        match cut {
            Some(cut) => {
                let rest = self.text.split_off(cut);
                self.flush();
                self.text = rest;
            }
            // A long run without a space is no word; let it through.
            None if self.text.len() > MAX_HELD_TEXT => self.flush(),
            None => {}
        }
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            (self.emit)(RunEvent::Text {
                delta: std::mem::take(&mut self.text),
            });
        }
    }
}

impl Agent {
    /// One model call, streamed: text is forwarded as it comes, tool calls are collected.
    pub(crate) async fn model_turn(
        &self,
        request: ModelRequest,
        emit: &impl Fn(RunEvent),
    ) -> Result<ModelTurn, String> {
        let mut stream = self
            .model
            .stream(request)
            .await
            .map_err(|e| e.to_string())?;
        let mut turn = ModelTurn::default();
        let mut finished = false;
        let mut held = Held {
            text: String::new(),
            by_word: self.redactor.is_some(),
            emit,
        };
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    held.flush();
                    return Err(e.to_string());
                }
            };
            match event {
                ModelEvent::TextDelta(delta) => {
                    turn.text.push_str(&delta);
                    held.push(delta);
                }
                ModelEvent::ToolCall(call) => turn.calls.push(call),
                ModelEvent::Usage(u) => turn.usage += u,
                ModelEvent::Finished { stop_reason } => {
                    finished = true;
                    // Anthropic's and OpenAI's words for a refusal.
                    turn.refused =
                        matches!(stop_reason.as_deref(), Some("refusal" | "content_filter"));
                }
            }
        }
        held.flush();
        if !finished {
            return Err(format!(
                "{}: the stream ended before the answer was complete",
                self.model.describe()
            ));
        }
        Ok(turn)
    }
}
