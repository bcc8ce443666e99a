//! An on-disk cache of text embeddings, so a tool catalog is embedded once per model instead of
//! at every start.
//!
//! Vectors are keyed by the SHA-256 of the exact text they embed, in one file per model
//! (repository and revision), so a changed description is simply a new key and two models never
//! mix.
//!
//! The file is append-only: a 12-byte header (`CAIRNEMB`, then the format version as a u32 LE),
//! then records of the text's 32-byte hash, the dimension as a u32 LE, and that many f32 LE.
//! Several processes (an editor's server, `cairn bench`) may share it: each batch of records is
//! appended with one write under an exclusive `flock` on the file, and reads take the same lock,
//! so no one sees another's half-written record.
//! A truncated or corrupt tail (a writer that died, a full disk) is ignored and cut off by the
//! next writer, and a record of the wrong dimension is skipped: the file is only a cache, so a
//! problem with it costs a warning, never an embedding.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use sha2::{Digest, Sha256};

use crate::embed::{EmbedError, Embedder, ModelSpec};

/// The first bytes of every cache file.
const MAGIC: &[u8; 8] = b"CAIRNEMB";

/// The record layout this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;

const HEADER_LEN: u64 = 12;

/// Hash and dimension, before the values.
const RECORD_HEAD: usize = 32 + 4;

/// No sentence embedder comes near this many dimensions: a larger (or zero) dimension means a
/// corrupt record whose length cannot be trusted, so it ends the readable part of the file.
const MAX_DIM: usize = 65_536;

/// Texts per model call and per append in [`EmbeddingCache::embed_all`]: small enough that an
/// interrupted run keeps most of its work and other threads see vectors arrive steadily.
pub const EMBED_BATCH: usize = 16;

/// The key of a text: the SHA-256 of its exact bytes.
pub type TextKey = [u8; 32];

/// The key under which `text`'s vector is cached.
pub fn text_key(text: &str) -> TextKey {
    Sha256::digest(text.as_bytes()).into()
}

/// Why a cache could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    #[error("cannot create the embedding cache directory {}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot open the embedding cache {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the embedding cache {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot write the embedding cache {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not an embedding cache (bad header); delete it to start afresh", path.display())]
    NotACache { path: PathBuf },
    #[error(
        "{} has format {found}, this cairn reads {FORMAT_VERSION}; delete it or use the cairn that wrote it",
        path.display()
    )]
    Version { path: PathBuf, found: u32 },
    #[error(
        "a vector of {found} dimensions does not fit this cache of {expected}-dimensional vectors"
    )]
    Dimension { expected: usize, found: usize },
}

/// Embeddings of texts for one model, in memory and (unless [`EmbeddingCache::in_memory`]) on disk.
#[derive(Debug)]
pub struct EmbeddingCache {
    model: ModelSpec,
    inner: Mutex<Inner>,
    /// Texts this cache ran through the model (not those it read back).
    embedded: AtomicUsize,
}

#[derive(Debug)]
struct Inner {
    vectors: HashMap<TextKey, Vec<f32>>,
    /// The dimension every vector has: the embedder's once one is used, before that the most
    /// common one on disk.
    dim: Option<usize>,
    disk: Option<Disk>,
}

#[derive(Debug)]
struct Disk {
    path: PathBuf,
    /// Opened for reading and appending, for the cache's whole life.
    file: File,
    /// Where the records not read yet begin: the end of the last whole record read.
    offset: u64,
    /// Keys with a record of the current dimension in the file, so none is written twice.
    stored: HashSet<TextKey>,
    /// A write failed already; later failures are not logged again.
    write_failed: bool,
}

/// cairn's cache folder: `$XDG_CACHE_HOME/cairn`, else `$HOME/.cache/cairn`; `None` when
/// neither is set. `var` reads the environment (the process's, or the one a front was given),
/// so every cache of cairn (embeddings, the semantic-search index) sits under one root.
pub fn cache_root(var: impl Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.as_os_str().is_empty());
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return Some(dir.join("cairn"));
    }
    var("HOME").map(|home| home.join(".cache").join("cairn"))
}

impl EmbeddingCache {
    /// `$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn/embeddings`, else
    /// `$HOME/.cache/cairn/embeddings`; `None` when none of them is set.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("CAIRN_CACHE_DIR").filter(|v| !v.is_empty()) {
            return Some(dir.into());
        }
        cache_root(|name| std::env::var_os(name).map(PathBuf::from)).map(|r| r.join("embeddings"))
    }

    /// The file under a cache directory that holds `spec`'s vectors: a readable form of the
    /// repository name, then a hash of repository and revision, which tells models apart even
    /// where the readable part is cut or sanitised alike.
    pub fn file_name(spec: &ModelSpec) -> String {
        let readable: String = spec
            .repo
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '-'
                }
            })
            .take(64)
            .collect();
        let mut hasher = Sha256::new();
        hasher.update(spec.repo.as_bytes());
        hasher.update([0]);
        hasher.update(spec.revision.as_bytes());
        let digest = hasher.finalize();
        format!(
            "{}-{}.emb",
            readable.trim_start_matches(['.', '-']),
            hex(&digest[..12])
        )
    }

    /// Opens (creating the directory) the cache for one model (keyed by repo + revision);
    /// loads existing records.
    pub fn open(dir: &Path, spec: &ModelSpec) -> Result<Self, CacheError> {
        std::fs::create_dir_all(dir).map_err(|source| CacheError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
        let path = dir.join(Self::file_name(spec));
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|source| CacheError::Open {
                path: path.clone(),
                source,
            })?;
        let mut disk = Disk {
            path,
            file,
            offset: HEADER_LEN,
            stored: HashSet::new(),
            write_failed: false,
        };
        let mut inner = Inner {
            vectors: HashMap::new(),
            dim: None,
            disk: None,
        };
        {
            let _lock = FileLock::exclusive(&disk.file).map_err(|source| CacheError::Read {
                path: disk.path.clone(),
                source,
            })?;
            disk.check_header()?;
            let records = disk.read_new()?;
            // Before any embedder says which dimension is right, trust the one most records have,
            // so a stray record cannot hide all the others.
            let mut counts: HashMap<usize, usize> = HashMap::new();
            for (_, v) in &records {
                *counts.entry(v.len()).or_default() += 1;
            }
            inner.dim = counts
                .into_iter()
                .max_by_key(|&(dim, n)| (n, dim))
                .map(|(dim, _)| dim);
            inner.absorb(&mut disk, records);
        }
        inner.disk = Some(disk);
        Ok(Self {
            model: spec.clone(),
            inner: Mutex::new(inner),
            embedded: AtomicUsize::new(0),
        })
    }

    /// An in-memory cache that persists nothing (for when no dir is usable).
    pub fn in_memory(spec: &ModelSpec) -> Self {
        Self {
            model: spec.clone(),
            inner: Mutex::new(Inner {
                vectors: HashMap::new(),
                dim: None,
                disk: None,
            }),
            embedded: AtomicUsize::new(0),
        }
    }

    /// The model this cache holds vectors of.
    pub fn model(&self) -> &ModelSpec {
        &self.model
    }

    /// The cache file, unless the cache is in memory only.
    pub fn path(&self) -> Option<PathBuf> {
        self.lock().disk.as_ref().map(|d| d.path.clone())
    }

    /// The dimension of the cached vectors, once known.
    pub fn dim(&self) -> Option<usize> {
        self.lock().dim
    }

    /// The cached vector of `text`, if any.
    pub fn get(&self, text: &str) -> Option<Vec<f32>> {
        self.get_key(&text_key(text))
    }

    /// The cached vector under `key` (see [`text_key`]), if any.
    pub fn get_key(&self, key: &TextKey) -> Option<Vec<f32>> {
        self.lock().vectors.get(key).cloned()
    }

    /// How many texts have a vector.
    pub fn len(&self) -> usize {
        self.lock().vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many texts this cache ran through an embedder (texts read back from disk or already
    /// in memory are not counted).
    pub fn embedded_count(&self) -> usize {
        self.embedded.load(Ordering::Relaxed)
    }

    /// Stores vectors computed elsewhere, in memory and in one append to the file.
    /// Every vector must have the cache's dimension (the first insert into an empty cache sets
    /// it). On a write error the vectors stay in memory and the error is returned.
    pub fn insert(&self, entries: &[(&str, &[f32])]) -> Result<(), CacheError> {
        let mut inner = self.lock();
        let expected = match (inner.dim, entries.first()) {
            (Some(dim), _) => dim,
            (None, Some((_, v))) => v.len(),
            (None, None) => return Ok(()),
        };
        if let Some((_, v)) = entries.iter().find(|(_, v)| v.len() != expected) {
            return Err(CacheError::Dimension {
                expected,
                found: v.len(),
            });
        }
        inner.dim = Some(expected);
        let keyed: Vec<(TextKey, Vec<f32>)> = entries
            .iter()
            .map(|(text, v)| (text_key(text), v.to_vec()))
            .collect();
        inner.store(keyed)
    }

    /// Vectors for every text, in order: cached ones read, missing ones embedded with `embedder`
    /// (in batches) and stored.
    ///
    /// Before embedding, the file is read again, in case another process embedded the same texts
    /// meanwhile. A failure to write the file is logged, not returned: the vectors are still good.
    pub fn embed_all(
        &self,
        embedder: &Embedder,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<TextKey> = texts.iter().map(|t| text_key(t)).collect();
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        {
            let mut inner = self.lock();
            inner.adopt_dim(embedder.dim(), &self.model);
            inner.fill(&keys, &mut out);
            if out.iter().any(Option::is_none) {
                inner.refresh();
                inner.fill(&keys, &mut out);
            }
        }

        // Each missing text once, however often it occurs.
        let mut seen = HashSet::new();
        let missing: Vec<usize> = (0..texts.len())
            .filter(|&i| out[i].is_none() && seen.insert(keys[i]))
            .collect();
        // The model runs without the lock held, so `get` from other threads never waits on it.
        let mut fresh: HashMap<TextKey, Vec<f32>> = HashMap::new();
        for chunk in missing.chunks(EMBED_BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let vectors = embedder.embed(&batch)?;
            self.embedded.fetch_add(chunk.len(), Ordering::Relaxed);
            let keyed: Vec<(TextKey, Vec<f32>)> =
                chunk.iter().map(|&i| keys[i]).zip(vectors).collect();
            fresh.extend(keyed.iter().cloned());
            let mut inner = self.lock();
            if inner.dim == Some(embedder.dim()) {
                // `store` logs a failed write once and keeps the vectors in memory.
                let _ = inner.store(keyed);
            }
        }
        Ok(out
            .into_iter()
            .zip(&keys)
            .map(|(v, k)| v.or_else(|| fresh.get(k).cloned()).unwrap_or_default())
            .collect())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere cannot leave the map half updated in a way that matters to a cache.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    /// Switches to `dim`, dropping vectors of another dimension (the model files changed under
    /// the same revision, or the file held strays).
    fn adopt_dim(&mut self, dim: usize, model: &ModelSpec) {
        if self.dim == Some(dim) {
            return;
        }
        if !self.vectors.is_empty() {
            tracing::warn!(
                repo = %model.repo,
                revision = %model.revision,
                cached = ?self.dim,
                model_dim = dim,
                "cached embeddings have another dimension than the model; ignoring them"
            );
        }
        self.vectors.clear();
        if let Some(disk) = &mut self.disk {
            disk.stored.clear();
        }
        self.dim = Some(dim);
    }

    fn fill(&self, keys: &[TextKey], out: &mut [Option<Vec<f32>>]) {
        for (slot, key) in out.iter_mut().zip(keys) {
            if slot.is_none() {
                *slot = self.vectors.get(key).cloned();
            }
        }
    }

    /// Reads records other processes appended since the last read.
    fn refresh(&mut self) {
        let Some(mut disk) = self.disk.take() else {
            return;
        };
        let result = FileLock::exclusive(&disk.file)
            .and_then(|_lock| disk.read_new_io())
            .map(|records| self.absorb(&mut disk, records));
        if let Err(source) = result {
            tracing::warn!(path = %disk.path.display(), error = %source, "cannot read the embedding cache");
        }
        self.disk = Some(disk);
    }

    /// Keeps the records of the current dimension.
    fn absorb(&mut self, disk: &mut Disk, records: Vec<(TextKey, Vec<f32>)>) {
        let mut skipped = 0usize;
        for (key, v) in records {
            if Some(v.len()) == self.dim {
                disk.stored.insert(key);
                self.vectors.insert(key, v);
            } else {
                skipped += 1;
            }
        }
        if skipped > 0 {
            tracing::warn!(
                path = %disk.path.display(),
                skipped,
                dim = ?self.dim,
                "embedding cache records of another dimension ignored"
            );
        }
    }

    /// Keeps vectors in memory and appends those the file lacks, in one write.
    fn store(&mut self, entries: Vec<(TextKey, Vec<f32>)>) -> Result<(), CacheError> {
        let Some(mut disk) = self.disk.take() else {
            self.vectors.extend(entries);
            return Ok(());
        };
        let result = self.append(&mut disk, &entries);
        self.vectors.extend(entries);
        if let Err(err) = &result
            && !disk.write_failed
        {
            disk.write_failed = true;
            tracing::warn!(
                error = %chain(err),
                "embedding cache not written; vectors are kept in memory only"
            );
        }
        self.disk = Some(disk);
        result
    }

    fn append(
        &mut self,
        disk: &mut Disk,
        entries: &[(TextKey, Vec<f32>)],
    ) -> Result<(), CacheError> {
        let write_err = |path: &Path, source| CacheError::Write {
            path: path.to_owned(),
            source,
        };
        let _lock = FileLock::exclusive(&disk.file).map_err(|e| write_err(&disk.path, e))?;
        // Catch up first: another process may have appended (perhaps these very texts), and a
        // torn tail must be cut before our records go after it.
        let records = disk.read_new()?;
        self.absorb(disk, records);
        let mut buf = Vec::new();
        let mut batch = HashSet::new();
        for (key, v) in entries {
            if !disk.stored.contains(key) && batch.insert(*key) {
                encode_record(&mut buf, key, v);
            }
        }
        if buf.is_empty() {
            return Ok(());
        }
        if let Err(e) = disk.file.write_all(&buf) {
            // Leave no partial record behind for the next reader to skip.
            let _ = disk.file.set_len(disk.offset);
            return Err(write_err(&disk.path, e));
        }
        disk.offset += buf.len() as u64;
        disk.stored.extend(batch);
        Ok(())
    }
}

impl Disk {
    /// Checks the header, writing it into a new (empty) file. Called with the lock held.
    fn check_header(&mut self) -> Result<(), CacheError> {
        let read_err = |path: &Path, source| CacheError::Read {
            path: path.to_owned(),
            source,
        };
        let len = self
            .file
            .metadata()
            .map_err(|e| read_err(&self.path, e))?
            .len();
        let mut header = Vec::with_capacity(HEADER_LEN as usize);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let mut found = vec![0u8; len.min(HEADER_LEN) as usize];
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_exact(&mut found))
            .map_err(|e| read_err(&self.path, e))?;
        if len < HEADER_LEN {
            // Empty, or a creator that died inside its first write: start the file afresh.
            if !header.starts_with(&found) {
                return Err(CacheError::NotACache {
                    path: self.path.clone(),
                });
            }
            self.file
                .set_len(0)
                .and_then(|()| self.file.write_all(&header))
                .map_err(|source| CacheError::Write {
                    path: self.path.clone(),
                    source,
                })?;
            return Ok(());
        }
        if &found[..8] != MAGIC {
            return Err(CacheError::NotACache {
                path: self.path.clone(),
            });
        }
        let version = u32::from_le_bytes([found[8], found[9], found[10], found[11]]);
        if version != FORMAT_VERSION {
            return Err(CacheError::Version {
                path: self.path.clone(),
                found: version,
            });
        }
        Ok(())
    }

    fn read_new(&mut self) -> Result<Vec<(TextKey, Vec<f32>)>, CacheError> {
        self.read_new_io().map_err(|source| CacheError::Read {
            path: self.path.clone(),
            source,
        })
    }

    /// Parses the records after `offset`, moves `offset` past the whole ones, and cuts off a
    /// torn or corrupt tail. Called with the lock held, so a tail cannot be a write in progress.
    fn read_new_io(&mut self) -> io::Result<Vec<(TextKey, Vec<f32>)>> {
        let mut buf = Vec::new();
        self.file.seek(SeekFrom::Start(self.offset))?;
        self.file.read_to_end(&mut buf)?;
        let (records, used) = parse_records(&buf);
        let good_end = self.offset + used as u64;
        if used < buf.len() {
            tracing::warn!(
                path = %self.path.display(),
                offset = good_end,
                bytes = buf.len() - used,
                "embedding cache has a truncated or corrupt tail; ignoring it"
            );
            self.file.set_len(good_end)?;
        }
        self.offset = good_end;
        Ok(records)
    }
}

/// Appends one record to `buf`.
fn encode_record(buf: &mut Vec<u8>, key: &TextKey, vector: &[f32]) {
    buf.reserve(RECORD_HEAD + 4 * vector.len());
    buf.extend_from_slice(key);
    buf.extend_from_slice(&(vector.len() as u32).to_le_bytes());
    for x in vector {
        buf.extend_from_slice(&x.to_le_bytes());
    }
}

/// The records of `buf` and how many bytes they span; parsing stops at the first record that
/// is cut short or has an impossible dimension. Records holding a non-finite value are skipped.
fn parse_records(buf: &[u8]) -> (Vec<(TextKey, Vec<f32>)>, usize) {
    let mut records = Vec::new();
    let mut at = 0;
    while let Some(head) = buf.get(at..at + RECORD_HEAD) {
        let mut key = [0u8; 32];
        key.copy_from_slice(&head[..32]);
        let dim = u32::from_le_bytes([head[32], head[33], head[34], head[35]]) as usize;
        if dim == 0 || dim > MAX_DIM {
            break;
        }
        let end = at + RECORD_HEAD + 4 * dim;
        let Some(values) = buf.get(at + RECORD_HEAD..end) else {
            break;
        };
        let vector: Vec<f32> = values
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if vector.iter().all(|x| x.is_finite()) {
            records.push((key, vector));
        }
        at = end;
    }
    (records, at)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An error and its causes on one line, for logs and user-facing messages.
pub(crate) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// An exclusive advisory lock on the cache file, released on drop. Every cairn process takes it
/// to read or append, so appends from several processes never interleave. It holds its own
/// handle (a duplicate, which shares the lock) so the cache's handle stays free to use.
struct FileLock {
    #[cfg_attr(not(unix), allow(dead_code))]
    file: File,
}

impl FileLock {
    #[cfg(unix)]
    fn exclusive(file: &File) -> io::Result<Self> {
        use rustix::fs::{FlockOperation, flock};
        let file = file.try_clone()?;
        loop {
            match flock(&file, FlockOperation::LockExclusive) {
                Ok(()) => return Ok(Self { file }),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Without `flock`, appends are still single writes; only concurrent processes could clash.
    #[cfg(not(unix))]
    fn exclusive(file: &File) -> io::Result<Self> {
        Ok(Self {
            file: file.try_clone()?,
        })
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        #[cfg(unix)]
        let _ = rustix::fs::flock(&self.file, rustix::fs::FlockOperation::Unlock);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_cache_root_is_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| PathBuf::from(v))
            }
        };
        assert_eq!(
            cache_root(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/cairn"))
        );
        assert_eq!(
            cache_root(env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/cairn"))
        );
        assert_eq!(cache_root(env(&[])), None);
    }

    fn spec(repo: &str) -> ModelSpec {
        ModelSpec {
            repo: repo.to_owned(),
            revision: "r1".to_owned(),
        }
    }

    fn file_of(cache: &EmbeddingCache) -> PathBuf {
        cache.path().unwrap()
    }

    #[test]
    fn vectors_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let model = spec("org/model");
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert!(cache.is_empty());
        cache
            .insert(&[("alpha", &[1.0, 0.0, 0.5]), ("beta", &[0.0, 1.0, -0.5])])
            .unwrap();
        cache.insert(&[("gamma", &[0.25, 0.5, 0.75])]).unwrap();
        // Storing a text again writes nothing new.
        cache.insert(&[("alpha", &[1.0, 0.0, 0.5])]).unwrap();
        drop(cache);

        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.dim(), Some(3));
        assert_eq!(cache.get("alpha"), Some(vec![1.0, 0.0, 0.5]));
        assert_eq!(cache.get("gamma"), Some(vec![0.25, 0.5, 0.75]));
        assert_eq!(cache.get("delta"), None);
        let len = std::fs::metadata(file_of(&cache)).unwrap().len();
        assert_eq!(len, HEADER_LEN + 3 * (RECORD_HEAD as u64 + 12));
    }

    #[test]
    fn a_truncated_tail_keeps_the_good_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let model = spec("org/model");
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        cache.insert(&[("one", &[1.0, 2.0])]).unwrap();
        cache.insert(&[("two", &[3.0, 4.0])]).unwrap();
        let path = file_of(&cache);
        drop(cache);
        let full = std::fs::metadata(&path).unwrap().len();
        // Cut the second record in the middle of its values, as a writer dying would.
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(full - 3).unwrap();
        drop(file);

        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get("one"), Some(vec![1.0, 2.0]));
        assert_eq!(cache.get("two"), None);
        // The torn record was cut off, so new records land right after the good one and are read.
        cache.insert(&[("three", &[5.0, 6.0])]).unwrap();
        drop(cache);
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("three"), Some(vec![5.0, 6.0]));
    }

    #[test]
    fn garbage_after_the_records_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let model = spec("org/model");
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        cache.insert(&[("one", &[1.0, 2.0])]).unwrap();
        let path = file_of(&cache);
        drop(cache);
        // A record head claiming four billion dimensions.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&[0xff; 64]).unwrap();
        drop(file);
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert_eq!(cache.get("one"), Some(vec![1.0, 2.0]));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn models_do_not_share_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let a = EmbeddingCache::open(dir.path(), &spec("org/model")).unwrap();
        a.insert(&[("text", &[1.0, 0.0])]).unwrap();
        let other_revision = ModelSpec {
            repo: "org/model".to_owned(),
            revision: "r2".to_owned(),
        };
        for other in [spec("org/other"), other_revision, spec("org_model")] {
            let b = EmbeddingCache::open(dir.path(), &other).unwrap();
            assert_eq!(b.get("text"), None, "{other:?}");
            assert_ne!(b.path(), a.path());
        }
        drop(a);
        let a = EmbeddingCache::open(dir.path(), &spec("org/model")).unwrap();
        assert_eq!(a.get("text"), Some(vec![1.0, 0.0]));
    }

    #[test]
    fn a_record_of_the_wrong_dimension_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let model = spec("org/model");
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        cache
            .insert(&[("a", &[1.0, 0.0, 0.0]), ("b", &[0.0, 1.0, 0.0])])
            .unwrap();
        assert!(matches!(
            cache.insert(&[("short", &[1.0, 0.0])]),
            Err(CacheError::Dimension {
                expected: 3,
                found: 2
            })
        ));
        let path = file_of(&cache);
        drop(cache);
        // A stray two-dimensional record, then a good one after it.
        let mut buf = Vec::new();
        encode_record(&mut buf, &text_key("stray"), &[1.0, 1.0]);
        encode_record(&mut buf, &text_key("c"), &[0.0, 0.0, 1.0]);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&buf).unwrap();
        drop(file);

        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert_eq!(cache.dim(), Some(3));
        assert_eq!(cache.get("stray"), None);
        assert_eq!(cache.get("c"), Some(vec![0.0, 0.0, 1.0]));
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn a_foreign_file_is_refused_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let model = spec("org/model");
        let path = dir.path().join(EmbeddingCache::file_name(&model));
        std::fs::write(&path, b"not a cache at all").unwrap();
        let err = EmbeddingCache::open(dir.path(), &model).unwrap_err();
        assert!(matches!(err, CacheError::NotACache { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"not a cache at all");
    }

    #[test]
    fn concurrent_writers_do_not_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let model = spec("org/model");
        let caches: Vec<EmbeddingCache> = (0..4)
            .map(|_| EmbeddingCache::open(dir.path(), &model).unwrap())
            .collect();
        std::thread::scope(|s| {
            for (w, cache) in caches.iter().enumerate() {
                s.spawn(move || {
                    for i in 0..50 {
                        let text = format!("writer {w} text {i}");
                        let v = vec![w as f32, i as f32, 1.0, 2.0];
                        cache.insert(&[(&text, &v)]).unwrap();
                    }
                });
            }
        });
        drop(caches);
        let cache = EmbeddingCache::open(dir.path(), &model).unwrap();
        assert_eq!(cache.len(), 200);
        assert_eq!(
            cache.get("writer 3 text 49"),
            Some(vec![3.0, 49.0, 1.0, 2.0])
        );
    }

    #[test]
    fn in_memory_keeps_vectors_without_a_file() {
        let cache = EmbeddingCache::in_memory(&spec("org/model"));
        cache.insert(&[("x", &[1.0])]).unwrap();
        assert_eq!(cache.get("x"), Some(vec![1.0]));
        assert_eq!(cache.path(), None);
    }

    #[test]
    fn file_names_are_safe() {
        let name = EmbeddingCache::file_name(&ModelSpec {
            repo: "../../etc/passwd".to_owned(),
            revision: "main".to_owned(),
        });
        assert!(!name.contains('/'), "{name}");
        assert!(name.starts_with("etc-passwd-"), "{name}");
        assert!(name.ends_with(".emb"));
    }
}
