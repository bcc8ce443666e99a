//! cairn's web and API tools: everything a tool does with the web, on top of the web guard
//! (`cairn-web`), which stays the one place a request leaves from.
//!
//! - [`web`]: the 18 web tools (category `web`: fetch, raw, head, links, metadata, robots,
//!   sitemap, feed, search, readable text, tables, find, JSON, link checks, outline, images,
//!   archive dates, download into the workspace), over one [`web::WebTools`] host, served
//!   in-process as `cairn-web`;
//! - [`api`]: the API tools (category `api`: HTTP, JSON, forms, GraphQL, JSON-RPC, SOAP,
//!   webhooks, curl, JWT, OpenAPI), served as `cairn-api`, the `[[api.openapi]]` operations
//!   (`cairn-openapi`), and the vendor integrations in [`api::services`] (`cairn-services`),
//!   whose lists all page through one helper (`api::services::paging`).
//!
//! Nothing here builds an HTTP client or opens a socket: every request is a
//! [`cairn_web::WebRequest`] handed to [`cairn_web::WebGuard::fetch`], which checks the
//! address, pins the connection, applies the limits and attaches the vault's credential. The
//! parsers the tools need (HTML, feeds, XML, YAML and OpenAPI) live in this crate, so the crates
//! that use only the guard do not build them.

pub mod api;
pub mod web;
