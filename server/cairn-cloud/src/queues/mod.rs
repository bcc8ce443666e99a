//! Queues and notifications: SQS, Azure Queue Storage and Google Pub/Sub through one interface
//! (list, send, receive, purge), SNS topics, and the account tools.
