//! The integration tests of `cairn-webtools`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod api_support;
mod relay;

mod api_http;
mod api_openapi;
mod asana;
mod bitbucket;
mod github;
mod gitlab;
mod jira;
mod launchdarkly;
mod sendgrid;
mod snyk;
mod stripe;
mod vercel;
mod web_tools;
