//! Matrix (the client-server API) and Slack (the Web API), through the web guard with the token as a vault secret.
pub(crate) mod slack;
pub(crate) mod slack_channels;
pub(crate) mod slack_history;
pub(crate) mod slack_post;
