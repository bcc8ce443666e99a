//! The fixed API tools, one type per file: its arguments, its definition and its call. What
//! several of them share (building and sending requests, paging, specs, GraphQL, curl, JWT)
//! stays in the parent's modules and on the [`Api`](super::Api) host.

mod api_form_post;
mod api_from_curl;
mod api_get_json;
mod api_health;
mod api_json_rpc;
mod api_jwt_decode;
mod api_options;
mod api_paginate;
mod api_request;
mod api_soap;
mod api_webhook;
mod graphql_query;
mod graphql_schema;
mod openapi_call;
mod openapi_operations;

pub use api_form_post::ApiFormPost;
pub use api_from_curl::ApiFromCurl;
pub use api_get_json::ApiGetJson;
pub use api_health::ApiHealth;
pub use api_json_rpc::ApiJsonRpc;
pub use api_jwt_decode::ApiJwtDecode;
pub use api_options::ApiOptions;
pub use api_paginate::ApiPaginate;
pub use api_request::ApiRequest;
pub use api_soap::ApiSoap;
pub use api_webhook::ApiWebhook;
pub use graphql_query::GraphqlQuery;
pub use graphql_schema::GraphqlSchema;
pub use openapi_call::OpenapiCall;
pub use openapi_operations::OpenapiOperations;
