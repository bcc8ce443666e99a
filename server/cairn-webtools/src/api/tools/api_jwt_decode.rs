//! `api_jwt_decode`: a JWT's header and claims, decoded without verifying; no network.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::api::{Api, answer, jwt};

/// The `api_jwt_decode` tool.
pub struct ApiJwtDecode;

/// Arguments of `api_jwt_decode`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The token (header.claims.signature); a leading 'Bearer ' is dropped.
    token: String,
}

impl Tool for ApiJwtDecode {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_jwt_decode";
    const TITLE: &'static str = "Decode JWT";
    const DESCRIPTION: &'static str = "Decode a JWT (given as text) without verifying it: header, claims, and exp/iat/nbf as dates. No network.";
    const CATEGORY: Category = Category::Api;
    // It only reads the text it is given: read-only and local (the defaults for Read).
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async { jwt::decode_report(&a.token, jwt::now()) }).await
    }
}
