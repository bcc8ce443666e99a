//! Session transcripts, one JSON Lines file per session, so a chat can be reopened.
//!
//! Each line is one [`Record`]. Lines that do not parse (a crash mid-write) are skipped on load.

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::model::{Message, Usage};

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Record {
    /// The start of a run: the user's message starts it.
    Run {
        run_id: String,
        mode: String,
        started: u64,
    },
    Message {
        run_id: String,
        message: Message,
    },
    /// The run summarised the first `drop` messages of the conversation it was given (as
    /// [`SessionStore::messages`] built it) into `summary`. The messages stay in the file; the
    /// next runs get the summary in their place.
    Compaction {
        run_id: String,
        drop: usize,
        summary: String,
        turns: u32,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// The end of a run.
    End {
        run_id: String,
        usage: Usage,
        tool_calls: u32,
        outcome: String,
    },
}

/// A session in the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub session_id: String,
    /// The first user message, shortened.
    pub title: String,
    pub runs: usize,
    /// Seconds since the epoch of the last change.
    pub updated: u64,
}

/// One turn of a session: its number (1-based, in the order of the session's runs), its run and
/// the first line of the user's message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSummary {
    pub turn: usize,
    pub run_id: String,
    pub message: String,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    #[error("invalid session id `{0}` (letters, digits, `-` and `_` only)")]
    InvalidId(String),
    #[error("no session `{0}`")]
    NotFound(String),
    #[error("turn: {turn} is not a turn of this session (it has {turns})")]
    NoTurn { turn: usize, turns: usize },
    #[error("session store {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The directory of transcripts.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl SessionStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, session_id: &str) -> Result<PathBuf, SessionError> {
        // The id comes from the editor; it must not name a path.
        if !valid_id(session_id) {
            return Err(SessionError::InvalidId(session_id.to_string()));
        }
        Ok(self.dir.join(format!("{session_id}.jsonl")))
    }

    /// Appends records to a session, creating it.
    pub fn append(&self, session_id: &str, records: &[Record]) -> Result<(), SessionError> {
        let path = self.path(session_id)?;
        let io = |source| SessionError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(&self.dir).map_err(|source| SessionError::Io {
            path: self.dir.clone(),
            source,
        })?;
        let mut buf = String::new();
        for r in records {
            if let Ok(line) = serde_json::to_string(r) {
                buf.push_str(&line);
                buf.push('\n');
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        // One write per batch so a crash leaves at most one partial line, which load skips.
        file.write_all(buf.as_bytes()).map_err(io)
    }

    /// Stores one finished run: its start, the messages it added and how it ended. Every front
    /// saves a run this way, so a transcript reads the same whichever front wrote it.
    pub fn save_run(
        &self,
        session_id: &str,
        run_id: &str,
        mode: crate::Mode,
        outcome: &crate::RunOutcome,
    ) -> Result<(), SessionError> {
        let mut records = vec![Record::Run {
            run_id: run_id.to_string(),
            mode: mode.as_str().into(),
            started: now_secs(),
        }];
        if let Some(c) = &outcome.compaction {
            records.push(Record::Compaction {
                run_id: run_id.to_string(),
                drop: c.drop,
                summary: c.summary.clone(),
                turns: c.turns,
                tokens_before: c.tokens_before,
                tokens_after: c.tokens_after,
            });
        }
        records.extend(outcome.messages.iter().map(|m| Record::Message {
            run_id: run_id.to_string(),
            message: m.clone(),
        }));
        records.push(Record::End {
            run_id: run_id.to_string(),
            usage: outcome.usage,
            tool_calls: outcome.tool_calls,
            outcome: outcome.outcome_word().into(),
        });
        self.append(session_id, &records)
    }

    /// All records of a session.
    pub fn load(&self, session_id: &str) -> Result<Vec<Record>, SessionError> {
        let path = self.path(session_id)?;
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SessionError::NotFound(session_id.to_string()));
            }
            Err(source) => return Err(SessionError::Io { path, source }),
        };
        Ok(BufReader::new(file)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str(&line).ok())
            .collect())
    }

    /// The turns of a session, in order.
    pub fn turns(&self, session_id: &str) -> Result<Vec<TurnSummary>, SessionError> {
        let mut turns: Vec<TurnSummary> = Vec::new();
        for record in self.load(session_id)? {
            match record {
                Record::Run { run_id, .. } => turns.push(TurnSummary {
                    turn: turns.len() + 1,
                    run_id,
                    message: String::new(),
                }),
                Record::Message {
                    run_id,
                    message: Message::User { text, .. },
                } => {
                    if let Some(t) = turns
                        .iter_mut()
                        .rev()
                        .find(|t| t.run_id == run_id && t.message.is_empty())
                    {
                        t.message = text.lines().next().unwrap_or_default().to_owned();
                    }
                }
                _ => {}
            }
        }
        // A run without a message of the user's (`/compact`) is no turn to rewind to.
        turns.retain(|t| !t.message.is_empty());
        for (i, t) in turns.iter_mut().enumerate() {
            t.turn = i + 1;
        }
        Ok(turns)
    }

    /// The runs of a session's turns from `turn` (1-based) on, for a rewind; a turn the session
    /// does not have is [`SessionError::NoTurn`].
    pub fn runs_from(&self, session_id: &str, turn: usize) -> Result<Vec<String>, SessionError> {
        let turns = self.turns(session_id)?;
        if turn == 0 || turn > turns.len() {
            return Err(SessionError::NoTurn {
                turn,
                turns: turns.len(),
            });
        }
        Ok(turns
            .into_iter()
            .filter(|t| t.turn >= turn)
            .map(|t| t.run_id)
            .collect())
    }

    /// The conversation of a session, for the next run: compacted turns replaced by their
    /// summary. (The whole transcript is [`load`](Self::load)'s.)
    pub fn messages(&self, session_id: &str) -> Result<Vec<Message>, SessionError> {
        match self.load(session_id) {
            Ok(records) => {
                let mut view = Vec::new();
                for r in records {
                    match r {
                        Record::Message { message, .. } => view.push(message),
                        Record::Compaction { drop, summary, .. } if drop <= view.len() => {
                            view.splice(..drop, crate::compact::summary_messages(&summary));
                        }
                        _ => {}
                    }
                }
                Ok(view)
            }
            Err(SessionError::NotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Sessions, most recently changed first.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(SessionError::Io {
                    path: self.dir.clone(),
                    source,
                });
            }
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
            else {
                continue;
            };
            let Ok(records) = self.load(id) else { continue };
            let title = records
                .iter()
                .find_map(|r| match r {
                    Record::Message {
                        message: Message::User { text, .. },
                        ..
                    } => Some(shorten(text, 80)),
                    _ => None,
                })
                .unwrap_or_default();
            let runs = records
                .iter()
                .filter(|r| matches!(r, Record::Run { .. }))
                .count();
            let updated = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
                .unwrap_or(0);
            out.push(SessionSummary {
                session_id: id.to_string(),
                title,
                runs,
                updated,
            });
        }
        out.sort_by(|a, b| {
            b.updated
                .cmp(&a.updated)
                .then_with(|| a.session_id.cmp(&b.session_id))
        });
        Ok(out)
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= max_chars {
        line.to_string()
    } else {
        let mut s: String = line.chars().take(max_chars).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn round_trip_list_and_partial_lines() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        assert!(store.list().unwrap().is_empty());
        let user = Message::User {
            text: "read the README please\nthanks".into(),
            images: Vec::new(),
        };
        store
            .append(
                "s1",
                &[
                    Record::Run {
                        run_id: "r1".into(),
                        mode: "chat".into(),
                        started: 1,
                    },
                    Record::Message {
                        run_id: "r1".into(),
                        message: user.clone(),
                    },
                ],
            )
            .unwrap();
        // A crash mid-write leaves a partial line; loading skips it.
        std::fs::OpenOptions::new()
            .append(true)
            .open(store.dir().join("s1.jsonl"))
            .unwrap()
            .write_all(b"{\"type\":\"mess")
            .unwrap();
        assert_eq!(store.messages("s1").unwrap(), vec![user]);
        let list = store.list().unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(
            (list[0].title.as_str(), list[0].runs),
            ("read the README please", 1)
        );
        assert!(matches!(store.load("nope"), Err(SessionError::NotFound(_))));
        assert!(store.messages("nope").unwrap().is_empty());
        assert!(matches!(
            store.append("../evil", &[]),
            Err(SessionError::InvalidId(_))
        ));
        assert!(!dir.path().join("evil.jsonl").exists());
    }

    #[test]
    fn a_compaction_replaces_the_old_turns_for_the_next_run_and_keeps_the_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let user = |t: &str| Message::User {
            text: t.into(),
            images: Vec::new(),
        };
        let outcome = |messages: Vec<Message>, compaction| crate::RunOutcome {
            messages,
            usage: Usage::default(),
            tool_calls: 0,
            offered: Vec::new(),
            compaction,
            result: Ok(None),
        };
        store
            .save_run(
                "s",
                "r1",
                crate::Mode::Chat,
                &outcome(vec![user("one")], None),
            )
            .unwrap();
        store
            .save_run(
                "s",
                "r2",
                crate::Mode::Chat,
                &outcome(vec![user("two")], None),
            )
            .unwrap();
        let compaction = crate::run::Compaction {
            drop: 1,
            summary: "one happened".into(),
            turns: 1,
            tokens_before: 9,
            tokens_after: 5,
        };
        store
            .save_run(
                "s",
                "r3",
                crate::Mode::Chat,
                &outcome(vec![user("three")], Some(compaction)),
            )
            .unwrap();
        let view = store.messages("s").unwrap();
        let [intro, summary] = crate::compact::summary_messages("one happened");
        assert_eq!(view, vec![intro, summary, user("two"), user("three")]);
        let all: Vec<_> = store
            .load("s")
            .unwrap()
            .into_iter()
            .filter(|r| matches!(r, Record::Message { .. }))
            .collect();
        assert_eq!(all.len(), 3, "the transcript keeps every message");
    }
}
