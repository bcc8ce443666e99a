//! Webhooks (Discord, Microsoft Teams, Slack, generic) and SMS through Twilio, through the web guard.
