//! Matrix (the client-server API) and Slack (the Web API), through the web guard with the token as a vault secret.

// Matrix
mod matrix;
pub mod matrix_read;
pub mod matrix_rooms;
pub mod matrix_send;
pub(crate) mod slack;
pub(crate) mod slack_channels;
pub(crate) mod slack_history;
pub(crate) mod slack_post;
