//! Slash commands, one implementation for every front: the hub's prompts as commands the user
//! types after `/` (`/server:prompt key=value …`, or `/prompt …` when one server has it), a
//! message that starts with one expanded into the prompt's text, and attached resources as text.

use serde_json::Value;

use crate::hub::Hub;
use crate::resources::ServerPrompt;

/// Why a slash command could not be expanded; each message names the command or argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SlashError {
    #[error("no prompt `/{command}`; available: {available}")]
    Unknown { command: String, available: String },
    #[error("`/{command}` is offered by several servers; write /SERVER:{command}")]
    Ambiguous { command: String },
    #[error("prompt arguments are key=value, got `{word}`")]
    NotKeyValue { word: String },
    #[error("`/{command}` needs the argument `{argument}` (write {argument}=VALUE)")]
    MissingArgument { command: String, argument: String },
    /// The server failed to produce the prompt.
    #[error("{0}")]
    Server(String),
}

/// A command the user can type after `/`: an MCP prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    /// What the user types after `/`: the prompt's name, or `server:name` when several servers
    /// offer that name.
    pub name: String,
    pub description: String,
    /// The arguments as the user writes them (`city=… [state=…]`), if the prompt takes any.
    pub hint: Option<String>,
}

/// The prompt name and the argument words of a slash command. A message that starts with a
/// path (`/etc/hosts is odd`) is not a command: a name has no `/`.
fn parse(message: &str) -> Option<(&str, std::str::SplitWhitespace<'_>)> {
    let command = message.strip_prefix('/')?;
    if command.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = command.split_whitespace();
    let head = words.next()?;
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    let is_name = match head.split_once(':') {
        Some((server, name)) => valid(server) && valid(name),
        None => valid(head),
    };
    is_name.then_some((head, words))
}

/// Whether `name` is one of the agent's own commands.
fn is_agent_command(name: &str) -> bool {
    cairn_agent::run::COMMANDS
        .iter()
        .any(|(n, _, _)| *n == name)
}

/// A prompt argument's name and whether it is required, from its MCP definition.
fn argument(arg: &Value) -> Option<(&str, bool)> {
    let name = arg.get("name")?.as_str()?;
    let required = arg
        .get("required")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Some((name, required))
}

/// The commands of these prompts, in their order.
fn commands_of(prompts: &[ServerPrompt]) -> Vec<SlashCommand> {
    prompts
        .iter()
        .map(|p| {
            let shared = prompts.iter().filter(|q| q.name == p.name).nth(1).is_some();
            let name = if shared {
                format!("{}:{}", p.server, p.name)
            } else {
                p.name.clone()
            };
            let description = match &p.description {
                Some(d) if !d.trim().is_empty() => format!("{d} (MCP server `{}`)", p.server),
                _ => format!("A prompt of MCP server `{}`", p.server),
            };
            let words: Vec<String> = p
                .arguments
                .iter()
                .filter_map(argument)
                .map(|(name, required)| {
                    if required {
                        format!("{name}=…")
                    } else {
                        format!("[{name}=…]")
                    }
                })
                .collect();
            SlashCommand {
                name,
                description,
                hint: (!words.is_empty()).then(|| words.join(" ")),
            }
        })
        .collect()
}

/// The one prompt `/head` names among these, with the arguments the words give it.
fn resolve<'p>(
    prompts: &'p [ServerPrompt],
    head: &str,
    words: std::str::SplitWhitespace<'_>,
) -> Result<(&'p ServerPrompt, serde_json::Map<String, Value>), SlashError> {
    let found: Vec<&ServerPrompt> = match head.split_once(':') {
        Some((server, name)) => prompts
            .iter()
            .filter(|p| p.server == server && p.name == name)
            .collect(),
        None => prompts.iter().filter(|p| p.name == head).collect(),
    };
    let prompt = match found.as_slice() {
        [one] => *one,
        [] => {
            let known: Vec<String> = prompts
                .iter()
                .map(|p| format!("/{}:{}", p.server, p.name))
                .collect();
            return Err(SlashError::Unknown {
                command: head.to_string(),
                available: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        }
        _ => {
            return Err(SlashError::Ambiguous {
                command: head.to_string(),
            });
        }
    };
    let mut arguments = serde_json::Map::new();
    for word in words {
        match word.split_once('=') {
            Some((k, v)) => {
                arguments.insert(k.to_string(), Value::String(v.to_string()));
            }
            None => {
                return Err(SlashError::NotKeyValue {
                    word: word.to_string(),
                });
            }
        }
    }
    let missing = prompt
        .arguments
        .iter()
        .filter_map(argument)
        .find(|(name, required)| *required && !arguments.contains_key(*name));
    if let Some((name, _)) = missing {
        return Err(SlashError::MissingArgument {
            command: head.to_string(),
            argument: name.to_string(),
        });
    }
    Ok((prompt, arguments))
}

impl Hub {
    /// The prompts of the running servers as slash commands.
    pub async fn slash_commands(&self) -> Vec<SlashCommand> {
        // The agent's own commands first; a prompt cannot take their names.
        let mut commands: Vec<SlashCommand> = cairn_agent::run::COMMANDS
            .iter()
            .map(|(name, description, hint)| SlashCommand {
                name: (*name).to_string(),
                description: (*description).to_string(),
                hint: hint.map(str::to_string),
            })
            .collect();
        commands.extend(
            commands_of(&self.prompts().await)
                .into_iter()
                .filter(|c| !is_agent_command(&c.name)),
        );
        commands
    }

    /// Expands a slash command (`/server:prompt key=value …`, or `/prompt …` when only one
    /// server has that prompt) into the prompt's text; other messages pass unchanged.
    pub async fn expand_slash(&self, message: &str) -> Result<String, SlashError> {
        let Some((head, words)) = parse(message) else {
            return Ok(message.to_string());
        };
        // The agent's own commands (`/compact`) are the turn's to run, not a prompt's.
        if is_agent_command(head) {
            return Ok(message.to_string());
        }
        let prompts = self.prompts().await;
        let (prompt, arguments) = resolve(&prompts, head, words)?;
        self.prompt_text(&prompt.server, &prompt.name, arguments)
            .await
            .map_err(SlashError::Server)
    }

    /// The text of attached resources (server, URI), for the prompt.
    pub async fn attachments_text(&self, refs: &[(&str, &str)]) -> Result<String, String> {
        let mut out = String::new();
        for (server, uri) in refs.iter().copied() {
            let text = self.read_resource(server, uri).await?;
            out.push_str(&format!(
                "\n\nResource `{uri}` from `{server}`:\n```\n{}\n```",
                text.trim_end()
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn check(message: &str, expected: Option<(&str, &[&str])>) {
        let got = parse(message).map(|(head, words)| (head, words.collect::<Vec<_>>()));
        let expected = expected.map(|(h, w)| (h, w.to_vec()));
        assert_eq!(got, expected, "{message:?}");
    }

    #[test]
    fn slash_commands_and_paths() {
        check(
            "/everything:simple-prompt",
            Some(("everything:simple-prompt", &[])),
        );
        check(
            "/review file=src/a.rs depth=2",
            Some(("review", &["file=src/a.rs", "depth=2"])),
        );
        check("/etc/hosts looks wrong", None);
        check("/usr/bin: what is in it?", None);
        check("/ hello", None);
        check("plain message", None);
        check("/a:b:c x", None);
    }

    fn prompt(server: &str, name: &str, arguments: Value) -> ServerPrompt {
        ServerPrompt {
            server: server.into(),
            name: name.into(),
            description: Some(format!("{name} of {server}")),
            arguments: serde_json::from_value(arguments).unwrap(),
        }
    }

    fn prompts() -> Vec<ServerPrompt> {
        vec![
            prompt(
                "everything",
                "args-prompt",
                json!([{"name": "city", "required": true}, {"name": "state"}]),
            ),
            prompt("everything", "review", json!([])),
            prompt("git", "review", json!([])),
        ]
    }

    #[test]
    fn commands_use_the_short_name_unless_two_servers_share_it() {
        let commands = commands_of(&prompts());
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["args-prompt", "everything:review", "git:review"]);
        assert_eq!(commands[0].hint.as_deref(), Some("city=… [state=…]"));
        assert_eq!(
            commands[0].description,
            "args-prompt of everything (MCP server `everything`)"
        );
        assert_eq!(commands[1].hint, None);
    }

    #[track_caller]
    fn check_resolve(message: &str, expected: Result<(&str, &str, Value), SlashError>) {
        let prompts = prompts();
        let (head, words) = parse(message).unwrap();
        let got = resolve(&prompts, head, words)
            .map(|(p, args)| (p.server.as_str(), p.name.as_str(), Value::Object(args)));
        assert_eq!(got, expected, "{message:?}");
    }

    #[test]
    fn resolving_names_the_command_or_argument_at_fault() {
        check_resolve(
            "/args-prompt city=Paris",
            Ok(("everything", "args-prompt", json!({"city": "Paris"}))),
        );
        check_resolve("/git:review", Ok(("git", "review", json!({}))));
        check_resolve(
            "/args-prompt state=TX",
            Err(SlashError::MissingArgument {
                command: "args-prompt".into(),
                argument: "city".into(),
            }),
        );
        check_resolve(
            "/review",
            Err(SlashError::Ambiguous {
                command: "review".into(),
            }),
        );
        check_resolve(
            "/args-prompt Paris",
            Err(SlashError::NotKeyValue {
                word: "Paris".into(),
            }),
        );
        let unknown = SlashError::Unknown {
            command: "nope".into(),
            available: "/everything:args-prompt, /everything:review, /git:review".into(),
        };
        assert!(unknown.to_string().starts_with("no prompt `/nope`"));
        check_resolve("/nope x=1", Err(unknown));
    }
}
