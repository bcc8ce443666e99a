//! Queues and notifications: SQS, Azure Queue Storage and Google Pub/Sub through one interface
//! (list, send, receive, purge), and SNS topics (list, publish). What the queue tools share is
//! in [`service`].

pub(crate) mod list;
pub(crate) mod purge;
pub(crate) mod receive;
pub(crate) mod send;
mod service;
pub(crate) mod sns_publish;
pub(crate) mod sns_topics;
