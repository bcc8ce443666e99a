//! The local model as the process holds it: one loaded model shared by every agent built for the
//! same settings (a configuration change must not load gigabytes again), its status told to
//! whoever listens (the terminal's progress bar, the editor's `$/progress`), and the notice that
//! the default local model is in use, said once per process.

use std::sync::{Arc, Mutex, PoisonError};

use cairn_agent::model::ProviderStatus;
use cairn_local::{LocalModel, LocalSettings};

type Listener = Arc<dyn Fn(&ProviderStatus) + Send + Sync>;

static MODEL: Mutex<Option<Arc<LocalModel>>> = Mutex::new(None);
static LISTENERS: Mutex<Vec<Listener>> = Mutex::new(Vec::new());
/// The last status, for a listener that arrives late, and the notice, once given.
static LAST: Mutex<Option<ProviderStatus>> = Mutex::new(None);
static NOTICE: Mutex<Option<String>> = Mutex::new(None);

fn tell(status: ProviderStatus) {
    let listeners = LISTENERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for listener in &listeners {
        listener(&status);
    }
    if !matches!(
        status,
        ProviderStatus::Notice { .. } | ProviderStatus::Speed { .. }
    ) {
        *LAST.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
    }
}

/// The process's local model for `settings`: the existing one when the settings are the same.
pub fn model(settings: &LocalSettings) -> Arc<LocalModel> {
    let mut slot = MODEL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(existing) = slot.as_ref()
        && existing.settings() == settings
    {
        return existing.clone();
    }
    let model = Arc::new(LocalModel::new(settings.clone(), Some(Arc::new(tell))));
    *slot = Some(model.clone());
    *LAST.lock().unwrap_or_else(PoisonError::into_inner) = None;
    model
}

/// Says, once per process, that the default local model answers because nothing else is
/// configured.
pub fn notice_default(settings: &LocalSettings) {
    let message = format!(
        "no model provider is configured, so cairn answers with a local model on this machine's CPU: {} (about 1 GB, downloaded once into the Hugging Face cache, then used offline). For a hosted model set OPENAI_API_KEY or ANTHROPIC_API_KEY; for another local one set provider.model (docs/local-model.md).",
        settings.source.short()
    );
    {
        let mut said = NOTICE.lock().unwrap_or_else(PoisonError::into_inner);
        if said.is_some() {
            return;
        }
        *said = Some(message.clone());
    }
    tell(ProviderStatus::Notice { message });
}

/// Calls `listener` with the notice and the last status, if any, then on every change.
pub fn on_status(listener: Listener) {
    LISTENERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(listener.clone());
    if let Some(message) = NOTICE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
    {
        listener(&ProviderStatus::Notice { message });
    }
    let last = LAST.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(status) = last {
        listener(&status);
    }
}

/// Shows the local model's status on stderr: the notice, a progress bar for the download (one
/// line redrawn on a terminal, a line per tenth otherwise), and the load.
#[allow(clippy::print_stderr)]
pub fn show_on_terminal() {
    use std::io::{IsTerminal, Write};
    let tty = std::io::stderr().is_terminal();
    let shown = Mutex::new(None::<(String, u64)>);
    on_status(Arc::new(move |status| match status {
        ProviderStatus::Notice { message } => eprintln!("cairn: {message}"),
        ProviderStatus::Downloading { file, done, total } => {
            let step = if tty { 100 } else { 10 };
            let part = (done * step).checked_div(*total).unwrap_or(0);
            let mut shown = shown.lock().unwrap_or_else(PoisonError::into_inner);
            if shown.as_ref() == Some(&(file.clone(), part)) {
                return;
            }
            *shown = Some((file.clone(), part));
            let line = format!(
                "cairn: downloading {file}: {}% ({} of {} MB)",
                part * 100 / step,
                done / 1_000_000,
                total / 1_000_000
            );
            let mut err = std::io::stderr();
            if tty {
                let bar = "#".repeat((part / 4) as usize);
                let _ = write!(err, "\r{line} [{bar:<25}]");
                if done >= total {
                    let _ = writeln!(err);
                }
            } else {
                let _ = writeln!(err, "{line}");
            }
            let _ = err.flush();
        }
        ProviderStatus::Loading { model } => eprintln!("cairn: loading {model}"),
        ProviderStatus::Ready { description } => eprintln!("cairn: ready: {description}"),
        speed @ ProviderStatus::Speed { .. } => {
            if let Some(line) = speed.speed_line() {
                eprintln!("cairn: {line}");
            }
        }
        // The run's error says it, with what to do.
        ProviderStatus::Failed { .. } => {}
    }));
}
