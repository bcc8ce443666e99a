//! A panicking handler becomes an `InternalError` reply, and the server keeps serving.
//!
//! tower-lsp-server polls handler futures inside its serve loop, so an uncaught panic there
//! would end the whole server.

use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Request, Response};

/// Wraps the LSP service.
pub struct CatchPanic<S>(pub S);

impl<S> Service<Request> for CatchPanic<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let id = request.id().cloned();
        let method = request.method().to_string();
        let future = self.0.call(request);
        Box::pin(async move {
            match AssertUnwindSafe(future).catch_unwind().await {
                Ok(result) => result,
                Err(_) => {
                    // The panic text can hold request data; it stays out of the reply and the log.
                    tracing::error!(method = %method, "request handler panicked");
                    Ok(id.map(|id| {
                        Response::from_error(
                            id,
                            Error {
                                code: ErrorCode::InternalError,
                                message: format!("internal error: the {method} handler panicked")
                                    .into(),
                                data: None,
                            },
                        )
                    }))
                }
            }
        })
    }
}
