//! Model files from the Hugging Face cache at a pinned revision, and from the Hub when the
//! machine may go online: the one place cairn's local models (the sentence embedder here, the
//! local chat model in `cairn-local`) find their weights.
//!
//! With `HF_HUB_OFFLINE` set only the cache is read. A download goes through hf-hub, which
//! writes `blobs/<etag>.part`, resumes it with a `Range` request after an interruption, and
//! moves the blob into place only when it is complete, so a cut download is never used.

use std::path::PathBuf;

use hf_hub::{Cache, Repo, RepoType};

/// Hears how a model download goes: file name, bytes so far, bytes in all.
pub type DownloadReport<'r> = dyn Fn(&str, u64, u64) + Send + Sync + 'r;

/// Why a model file could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HubError {
    #[error(
        "`{file}` of model {repo} at revision {revision} is not in the Hugging Face cache at {cache}; {hint}"
    )]
    NotInCache {
        repo: String,
        revision: String,
        file: String,
        cache: PathBuf,
        hint: String,
    },
    #[error("could not fetch `{file}` of model {repo} at revision {revision}; {hint}")]
    Download {
        repo: String,
        revision: String,
        file: String,
        hint: String,
        #[source]
        source: Box<hf_hub::api::sync::ApiError>,
    },
}

/// `file` of model `repo` at `revision` in the Hugging Face cache, if it is there; nothing is
/// downloaded. Also the cache's directory, for a message.
pub fn cached_model_file(repo: &str, revision: &str, file: &str) -> (Option<PathBuf>, PathBuf) {
    let cache = Cache::from_env();
    let found = cache
        .repo(Repo::with_revision(
            repo.to_owned(),
            RepoType::Model,
            revision.to_owned(),
        ))
        .get(file);
    (found, cache.path().clone())
}

/// Whether `HF_HUB_OFFLINE` forbids the Hub. Any value counts, as in huggingface_hub, except the
/// usual spellings of "no".
pub fn offline_from_env() -> bool {
    std::env::var("HF_HUB_OFFLINE").is_ok_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off"
        )
    })
}

/// The files of one model repository at one revision.
pub struct ModelFiles<'a> {
    pub repo: String,
    pub revision: String,
    /// What the user can do when a file is missing, ending the error message
    /// ("run `scripts/embedding-model` to lay it there").
    pub hint: String,
    pub cache: Cache,
    pub offline: bool,
    pub report: Option<&'a DownloadReport<'a>>,
}

/// hf-hub's progress hook, forwarded to a [`DownloadReport`].
struct Reporter<'a> {
    report: &'a DownloadReport<'a>,
    file: String,
    done: u64,
    total: u64,
}

impl hf_hub::api::Progress for Reporter<'_> {
    fn init(&mut self, size: usize, filename: &str) {
        self.file = filename.to_owned();
        self.total = size as u64;
        self.done = 0;
        (self.report)(&self.file, 0, self.total);
    }

    fn update(&mut self, size: usize) {
        self.done = self.done.saturating_add(size as u64).min(self.total);
        (self.report)(&self.file, self.done, self.total);
    }

    fn finish(&mut self) {
        (self.report)(&self.file, self.total, self.total);
    }
}

impl<'a> ModelFiles<'a> {
    /// The files of `repo` at `revision`, with the cache and offline mode from the environment.
    pub fn from_env(
        repo: impl Into<String>,
        revision: impl Into<String>,
        hint: impl Into<String>,
        report: Option<&'a DownloadReport<'a>>,
    ) -> Self {
        Self {
            repo: repo.into(),
            revision: revision.into(),
            hint: hint.into(),
            cache: Cache::from_env(),
            offline: offline_from_env(),
            report,
        }
    }

    fn hub_repo(&self) -> Repo {
        Repo::with_revision(self.repo.clone(), RepoType::Model, self.revision.clone())
    }

    /// The cached file, without going online.
    pub fn cached(&self, file: &str) -> Option<PathBuf> {
        self.cache.repo(self.hub_repo()).get(file)
    }

    /// The file: from the cache, else (when online) downloaded into it.
    pub fn get(&self, file: &str) -> Result<PathBuf, HubError> {
        if let Some(path) = self.cached(file) {
            return Ok(path);
        }
        if self.offline {
            return Err(HubError::NotInCache {
                repo: self.repo.clone(),
                revision: self.revision.clone(),
                file: file.to_owned(),
                cache: self.cache.path().clone(),
                hint: self.hint.clone(),
            });
        }
        let download = |source| HubError::Download {
            repo: self.repo.clone(),
            revision: self.revision.clone(),
            file: file.to_owned(),
            hint: self.hint.clone(),
            source: Box::new(source),
        };
        // `from_env` honours `HF_ENDPOINT` (a mirror), as huggingface_hub does.
        let api = hf_hub::api::sync::ApiBuilder::from_env()
            .with_progress(false)
            .with_cache_dir(self.cache.path().clone())
            .build()
            .map_err(download)?;
        let repo = api.repo(self.hub_repo());
        match self.report {
            Some(report) => repo
                .download_with_progress(
                    file,
                    Reporter {
                        report,
                        file: file.to_owned(),
                        done: 0,
                        total: 0,
                    },
                )
                .map_err(download),
            None => repo.get(file).map_err(download),
        }
    }

    /// Like [`Self::get`], for files a model may lack: the cache, then, when online, the Hub; a
    /// file the Hub does not have is simply absent.
    pub fn get_optional(&self, file: &str) -> Option<PathBuf> {
        if let Some(path) = self.cached(file) {
            return Some(path);
        }
        if self.offline {
            return None;
        }
        self.get(file).ok()
    }
}
