//! Approvals on the terminal: `--yes` accepts what policy would ask, a terminal asks the user,
//! and without either the call is refused.

use std::io::{BufRead, IsTerminal, Write};

use cairn_agent::policy::{ApprovalAnswer, ApprovalRequest, Approver};
use futures::future::BoxFuture;

pub struct TerminalApprover {
    pub yes: bool,
}

impl Approver for TerminalApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        let yes = self.yes;
        let prompt = format!(
            "cairn: allow {}?\n{}\nThe tool says of itself: {}\n[o]nce, [s]ession, [d]eny: ",
            request.reason,
            serde_json::to_string_pretty(&request.arguments).unwrap_or_default(),
            request.description
        );
        let protected = !request.protected_paths.is_empty();
        Box::pin(async move {
            if yes && protected {
                // `--yes` accepts what policy would ask; a protected path needs the user's
                // approval of that very path, which a blanket flag is not.
                let mut err = std::io::stderr();
                let _ = writeln!(
                    err,
                    "cairn: refused {}: --yes does not approve protected paths; run without --yes in a terminal to be asked",
                    request.reason
                );
                return ApprovalAnswer::Deny;
            }
            if yes {
                return ApprovalAnswer::AllowOnce;
            }
            if !std::io::stdin().is_terminal() {
                let mut err = std::io::stderr();
                let _ = writeln!(
                    err,
                    "cairn: refused {}: no terminal to ask; pass --yes to accept it",
                    request.reason
                );
                return ApprovalAnswer::Deny;
            }
            tokio::task::spawn_blocking(move || {
                let mut err = std::io::stderr();
                let _ = write!(err, "{prompt}");
                let _ = err.flush();
                let mut line = String::new();
                if std::io::stdin().lock().read_line(&mut line).is_err() {
                    return ApprovalAnswer::Deny;
                }
                match line.trim().to_ascii_lowercase().as_str() {
                    "o" | "once" | "y" | "yes" => ApprovalAnswer::AllowOnce,
                    // A protected path is approved once, whatever was typed.
                    "s" | "session" if protected => ApprovalAnswer::AllowOnce,
                    "s" | "session" => ApprovalAnswer::AllowSession,
                    _ => ApprovalAnswer::Deny,
                }
            })
            .await
            .unwrap_or(ApprovalAnswer::Deny)
        })
    }
}
