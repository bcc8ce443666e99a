//! `detect_language`: the natural language of a text or a file's text, with a confidence, by
//! whatlang's trigram profiles (69 languages, no model files).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::source;
use crate::ml::Ml;

/// Characters looked at: language shows in the first pages, and trigram counting of a whole
/// megabyte only costs time.
const MAX_CHARS: usize = 20_000;

/// The `detect_language` tool.
pub struct DetectLanguage;

/// Arguments of `detect_language`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The text to identify, or give `path`.
    text: Option<String>,
    /// A workspace file whose text to identify.
    path: Option<String>,
}

impl Tool for DetectLanguage {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "detect_language";
    const TITLE: &'static str = "Detect language";
    const DESCRIPTION: &'static str = "Identify the natural language (ISO 639-3 code and name) and script of a text or a workspace file's text, with a confidence and whether it is reliable.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, _: CallContext) -> CallToolResult {
        let input = match source::load(ml, args.text, args.path, "text", "path").await {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let sample: String = input.text.chars().take(MAX_CHARS).collect();
        let more = sample.len() < input.text.len();
        let Some(info) = whatlang::detect(&sample) else {
            return text(
                "No language detected: the text has too few letters (numbers, symbols or code alone name no language).",
            );
        };
        let lang = info.lang();
        let mut out = format!(
            "Language: {} ({}; native name {})\nScript: {}\nConfidence: {:.2}{}",
            lang.eng_name(),
            lang.code(),
            lang.name(),
            info.script().name(),
            info.confidence(),
            if info.is_reliable() {
                " (reliable)"
            } else {
                " (not reliable: the text is short or close to several languages)"
            }
        );
        if more {
            out.push_str(&format!("\n\nJudged on the first {MAX_CHARS} characters."));
        }
        text(out + &source::notes([&input]))
    }
}
