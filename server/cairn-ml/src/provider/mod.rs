//! Tools that ask the agent's model for one completion of their own: summarise, translate,
//! extract data against a JSON Schema, describe a picture. Each is a separate request with no
//! tools offered, whose tokens are reported in the result (`cairn/usage`) so the turn counts
//! them; what the tool sends passes the agent's redactor first, as everything bound for the
//! model does.

mod ask;
pub(crate) mod describe_image;
pub(crate) mod extract_structured;
pub(crate) mod summarize_text;
pub(crate) mod translate_text;
