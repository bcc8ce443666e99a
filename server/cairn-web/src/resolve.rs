//! Name resolution, done by the guard itself so it can check the addresses it will dial.
//!
//! The guard resolves once per hop, classifies every answer, and pins the connection to the
//! checked answers; the [`Resolver`] is a trait so tests can script answers (a rebinding
//! server, a name that does not exist in DNS) without touching the system resolver.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;

/// A boxed, sendable future (keeps [`Resolver`] object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Resolves a host name to socket addresses.
pub trait Resolver: Send + Sync {
    /// All addresses of `host` (a domain name, never an IP literal), with `port` attached.
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>>;
}

/// The operating system's resolver, through `tokio::net::lookup_host`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) })
    }
}
