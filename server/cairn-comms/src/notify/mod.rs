//! Webhooks (Discord, Microsoft Teams, Slack, generic) and SMS through Twilio, through the web guard.

pub(crate) mod sms_send;
pub(crate) mod webhook_post;
