//! Slash commands: the MCP prompts of a session's workspace as ACP available commands (sent
//! after `session/new` and `session/load`, and again when they change), and a prompt that
//! starts with `/name` expanded before its turn. The expansion itself is the binary's, over the
//! hub, the same for every front. cairn's own commands (`/rewind TURN`) come first and are
//! handled here, never expanded.

use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionNotification,
    SessionUpdate, UnstructuredCommandInput,
};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

/// A command the user can type after `/`, in cairn's terms (no ACP types cross).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// What the user types after `/`.
    pub name: String,
    pub description: String,
    /// The arguments as the user writes them, if the command takes any.
    pub hint: Option<String>,
}

/// The slash commands of one workspace's agent; the binary implements it over the MCP hub.
pub trait Commands: Send + Sync {
    /// The commands on offer now.
    fn list(&self) -> BoxFuture<'_, Vec<Command>>;
    /// A message that starts with a command, expanded; other messages unchanged. The error
    /// names the unknown command or the missing argument.
    fn expand<'a>(&'a self, message: &'a str) -> BoxFuture<'a, Result<String, String>>;
    /// Yields whenever the commands may have changed; ends when they no longer can.
    fn changes(&self) -> BoxStream<'static, ()>;
}

/// cairn's own commands, offered in every session before the MCP prompts.
fn builtins() -> Vec<Command> {
    vec![Command {
        name: "rewind".into(),
        description: "Restore the files the turns from TURN on changed to their state before it"
            .into(),
        hint: Some("TURN".into()),
    }]
}

/// `Some` when `first` (the prompt's first text) is `/rewind`: the turn, or an InvalidParams
/// error when it is not a number from 1.
pub(crate) fn rewind_turn(first: &str) -> Option<Result<usize, agent_client_protocol::Error>> {
    let mut words = first.split_whitespace();
    if words.next() != Some("/rewind") {
        return None;
    }
    let turn = words
        .next()
        .and_then(|w| w.parse::<usize>().ok())
        .filter(|t| *t > 0);
    Some(turn.ok_or_else(|| {
        agent_client_protocol::Error::invalid_params()
            .data("/rewind TURN: TURN is the number of the first turn to undo (1 is the first)")
    }))
}

fn update(commands: Vec<Command>) -> SessionUpdate {
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
        commands
            .into_iter()
            .map(|c| {
                AvailableCommand::new(c.name, c.description).input(c.hint.map(|hint| {
                    AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint))
                }))
            })
            .collect(),
    ))
}

/// Sends the session's commands, then again whenever they change, until the connection or the
/// commands' source ends. Never an error: a spawned task's error would end the connection.
pub(crate) async fn announce(
    commands: std::sync::Arc<dyn Commands>,
    cx: ConnectionTo<Client>,
    session_id: String,
) -> Result<(), agent_client_protocol::Error> {
    let mut changes = commands.changes();
    let mut sent = Vec::new();
    loop {
        let mut now = builtins();
        now.extend(commands.list().await);
        if now != sent {
            sent = now;
            let notification = SessionNotification::new(session_id.clone(), update(sent.clone()));
            if cx.send_notification(notification).is_err() {
                return Ok(());
            }
        }
        if changes.next().await.is_none() {
            return Ok(());
        }
        // Several changes in a row (servers starting) make one update.
        tokio::time::sleep(Duration::from_millis(100)).await;
        while futures::FutureExt::now_or_never(changes.next()).is_some_and(|c| c.is_some()) {}
    }
}
