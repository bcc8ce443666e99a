//! The index: every text file the user may read, cut into windows of [`WINDOW`] lines that
//! overlap by [`WINDOW`] − [`STEP`] lines (so a function of up to ten lines always lies whole
//! in one window), each window embedded (its path first, so names count) and its BM25 terms
//! counted.
//!
//! A refresh walks the workspace the way the file tools do (ignore rules, no hidden files, no
//! symlinks), keeps only what the user's rules let them read outright (protected files such as
//! `.env` never enter), compares each file's size and modification time with the index, reads
//! the ones that differ and compares a hash of their content, and re-embeds only the files whose
//! content changed; files gone or no longer readable leave the index. Binary and non-UTF-8 files
//! are recorded as skipped, so they are not read again until they change.
//!
//! Caps keep a call bounded: the first [`MAX_FILE_BYTES`] of a file, [`MAX_CHUNKS_PER_FILE`]
//! windows of it, [`MAX_FILES`] files and [`MAX_CHUNKS`] windows in all, and
//! [`FILES_PER_ROUND`] files embedded per query (the next query goes on where it stopped).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use cairn_select::bm25::{B, K1, tokenize};
use cairn_select::embed::Embedder;
use cairn_workspace::{Access, Operation, WalkOptions, Workspace, WorkspacePath};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::embed::vector::dot;

/// Lines in a window.
pub(crate) const WINDOW: usize = 30;
/// Lines from one window's start to the next's.
pub(crate) const STEP: usize = 20;
/// Bytes of a file read (cut after the last whole line); the rest is left out, with a note.
pub(crate) const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Windows of one file; a longer file is indexed in part, with a note.
pub(crate) const MAX_CHUNKS_PER_FILE: usize = 200;
/// Files in the index; a larger workspace is indexed in part, with a note.
pub(crate) const MAX_FILES: usize = 20_000;
/// Windows in the index: about 90 MB of vectors at 384 dimensions.
pub(crate) const MAX_CHUNKS: usize = 60_000;
/// Files (re-)embedded in one query; a few minutes of the model at most on a laptop.
pub(crate) const FILES_PER_ROUND: usize = 2_000;
/// Windows embedded at a time; cancellation is checked between batches.
const EMBED_BATCH: usize = 64;
/// Characters of a window the embedder is given (it reads 256 tokens anyway).
const MAX_EMBED_CHARS: usize = 2_000;
/// Bytes searched for a NUL to call a file binary, as the workspace does.
const BINARY_SNIFF: usize = 8 * 1024;

/// What a file held when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Text, cut into chunks.
    Text,
    /// A NUL in its first bytes: skipped.
    Binary,
    /// Not UTF-8: skipped.
    NotText,
}

/// One window of a file.
#[derive(Debug, Clone)]
pub(crate) struct Chunk {
    /// First line, from 1.
    pub start: u32,
    /// Last line, inclusive.
    pub end: u32,
    /// BM25 document length (tokens).
    pub len: u32,
    /// BM25 terms (hashed) and their counts, sorted by term.
    pub terms: Vec<(u64, u32)>,
    /// The unit-length embedding.
    pub vector: Vec<f32>,
}

/// One indexed file.
#[derive(Debug, Clone)]
pub(crate) struct FileEntry {
    pub mtime: u64,
    pub size: u64,
    /// SHA-256 of the bytes indexed.
    pub hash: [u8; 32],
    /// Unix seconds when the content was last hashed: a file modified in that same second may
    /// have changed again unseen (mtime has one-second resolution), so it is hashed again.
    pub checked: u64,
    pub kind: Kind,
    /// Whether only the first part was indexed.
    pub cut: bool,
    pub chunks: Vec<Chunk>,
}

/// The index of one workspace, for one embedding model.
#[derive(Debug, Clone)]
pub(crate) struct Index {
    /// `repo@revision` of the embedder.
    pub model: String,
    pub dim: usize,
    /// By display path (what `Workspace::resolve` takes back).
    pub files: BTreeMap<String, FileEntry>,
    /// BM25 document frequencies, kept in step with `files`.
    df: HashMap<u64, u32>,
    chunks: usize,
    total_len: u64,
}

/// What one refresh did, for the result's note and structured content.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub(crate) struct Refresh {
    /// Files whose content was (re-)embedded this time.
    pub embedded_files: usize,
    pub embedded_chunks: usize,
    /// Files that left the index (deleted, ignored or no longer readable).
    pub removed: usize,
    /// Files read again whose content had not changed.
    pub unchanged_rehashed: usize,
    /// Files seen changed but left for the next query (the per-query cap).
    pub pending: usize,
    /// Files beyond the index's caps, not indexed at all.
    pub left_out: usize,
    /// Entries the walk could not read.
    pub walk_errors: usize,
    /// Whether the call was cancelled before it finished.
    pub cancelled: bool,
}

impl Index {
    /// An empty index for the model `model` of `dim` dimensions.
    pub fn new(model: String, dim: usize) -> Index {
        Index {
            model,
            dim,
            files: BTreeMap::new(),
            df: HashMap::new(),
            chunks: 0,
            total_len: 0,
        }
    }

    /// An index of `files`, its BM25 statistics computed.
    pub fn from_files(model: String, dim: usize, files: BTreeMap<String, FileEntry>) -> Index {
        let mut index = Index::new(model, dim);
        for (path, entry) in files {
            index.insert(path, entry);
        }
        index
    }

    /// Windows in the index.
    pub fn chunk_count(&self) -> usize {
        self.chunks
    }

    /// Files whose text is indexed.
    pub fn text_files(&self) -> usize {
        self.files.values().filter(|f| f.kind == Kind::Text).count()
    }

    /// Files indexed only in part.
    pub fn cut_files(&self) -> usize {
        self.files.values().filter(|f| f.cut).count()
    }

    fn insert(&mut self, path: String, entry: FileEntry) {
        self.remove(&path);
        for c in &entry.chunks {
            self.chunks += 1;
            self.total_len += u64::from(c.len);
            for &(t, _) in &c.terms {
                *self.df.entry(t).or_default() += 1;
            }
        }
        self.files.insert(path, entry);
    }

    fn remove(&mut self, path: &str) -> bool {
        let Some(entry) = self.files.remove(path) else {
            return false;
        };
        for c in &entry.chunks {
            self.chunks -= 1;
            self.total_len -= u64::from(c.len);
            for &(t, _) in &c.terms {
                if let Some(n) = self.df.get_mut(&t) {
                    *n -= 1;
                    if *n == 0 {
                        self.df.remove(&t);
                    }
                }
            }
        }
        true
    }

    /// Brings the index up to date with the workspace: see the module docs. Returns whether
    /// anything changed (so the caller saves), and what was done.
    pub fn refresh(
        &mut self,
        ws: &Workspace,
        embedder: &Embedder,
        cancel: &CancellationToken,
    ) -> (bool, Refresh) {
        let mut report = Refresh::default();
        let mut changed = false;
        let (walked, errors) = walk(ws, cancel);
        report.walk_errors = errors;
        if cancel.is_cancelled() {
            report.cancelled = true;
            return (false, report);
        }
        // Gone, ignored now, or no longer readable: out.
        let present: HashSet<&str> = walked.iter().map(|(p, _)| p.as_str()).collect();
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|p| !present.contains(p.as_str()))
            .cloned()
            .collect();
        for path in gone {
            self.remove(&path);
            report.removed += 1;
            changed = true;
        }
        let now = unix_now();
        let mut batch: Vec<(String, FileEntry, Vec<String>)> = Vec::new();
        let mut batch_chunks = 0usize;
        let mut round = 0usize;
        let stats = stat_all(ws, &walked);
        for ((display, path), st) in walked.iter().zip(stats) {
            if cancel.is_cancelled() {
                report.cancelled = true;
                break;
            }
            let Some((mtime, len)) = st else {
                continue;
            };
            let old = self.files.get(display);
            if let Some(old) = old
                && old.mtime == mtime
                && old.size == len
                && mtime < old.checked
            {
                continue;
            }
            if old.is_none()
                && (self.files.len() + batch.len() >= MAX_FILES || self.chunks >= MAX_CHUNKS)
            {
                report.left_out += 1;
                continue;
            }
            if round >= FILES_PER_ROUND {
                report.pending += 1;
                continue;
            }
            let Some(read) = read_file(ws, path) else {
                continue;
            };
            if let Some(old) = self.files.get_mut(display)
                && old.hash == read.hash
            {
                // Touched, not changed: nothing to embed.
                old.mtime = mtime;
                old.size = len;
                old.checked = now;
                report.unchanged_rehashed += 1;
                changed = true;
                continue;
            }
            round += 1;
            let mut entry = FileEntry {
                mtime,
                size: len,
                hash: read.hash,
                checked: now,
                kind: read.kind,
                cut: read.cut,
                chunks: Vec::new(),
            };
            let mut texts = Vec::new();
            if let Some(text) = read.text {
                let windows = windows(&text);
                entry.cut |= windows.len() > MAX_CHUNKS_PER_FILE;
                for (start, end, body) in windows.into_iter().take(MAX_CHUNKS_PER_FILE) {
                    let (len, terms) = terms(&format!("{display}\n{body}"));
                    entry.chunks.push(Chunk {
                        start,
                        end,
                        len,
                        terms,
                        vector: Vec::new(),
                    });
                    texts.push(embed_text(display, &body));
                }
            }
            batch_chunks += texts.len();
            batch.push((display.clone(), entry, texts));
            if batch_chunks >= EMBED_BATCH {
                changed = true;
                if !self.embed_batch(embedder, &mut batch, &mut report) {
                    report.cancelled = true;
                    break;
                }
                batch_chunks = 0;
            }
        }
        if !batch.is_empty() && !report.cancelled {
            changed = true;
            if !self.embed_batch(embedder, &mut batch, &mut report) {
                report.cancelled = true;
            }
        }
        (changed, report)
    }

    /// Embeds the windows of `batch` and puts its files in the index; false when the embedder
    /// failed (the files stay out, and are tried again next time).
    fn embed_batch(
        &mut self,
        embedder: &Embedder,
        batch: &mut Vec<(String, FileEntry, Vec<String>)>,
        report: &mut Refresh,
    ) -> bool {
        let texts: Vec<&str> = batch
            .iter()
            .flat_map(|(_, _, t)| t.iter().map(String::as_str))
            .collect();
        let vectors = match embedder.embed(&texts) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!("semantic index: embedding failed: {e}");
                batch.clear();
                return false;
            }
        };
        let mut vectors = vectors.into_iter();
        for (path, mut entry, _) in batch.drain(..) {
            for chunk in &mut entry.chunks {
                chunk.vector = vectors.next().unwrap_or_default();
            }
            report.embedded_files += 1;
            report.embedded_chunks += entry.chunks.len();
            self.insert(path, entry);
        }
        true
    }

    /// The fused score and the cosine of every window for a query, in index order, with where
    /// each lies; only the windows `keep` accepts (by display path) are scored.
    pub fn rank(&self, query: &str, vector: &[f32], keep: &dyn Fn(&str) -> bool) -> Vec<Hit> {
        let mut hits = Vec::new();
        let mut dense = Vec::new();
        let mut lexical = Vec::new();
        let mut terms: Vec<u64> = tokenize(query).iter().map(|t| term_hash(t)).collect();
        terms.sort_unstable();
        terms.dedup();
        let n = self.chunks as f32;
        let avg = if self.chunks == 0 {
            1.0
        } else {
            self.total_len as f32 / n
        };
        let idf: Vec<(u64, f32)> = terms
            .iter()
            .filter_map(|t| {
                let df = *self.df.get(t)? as f32;
                Some((*t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        for (path, file) in &self.files {
            if file.chunks.is_empty() || !keep(path) {
                continue;
            }
            for chunk in &file.chunks {
                let cosine = dot(vector, &chunk.vector);
                let mut bm25 = 0.0;
                for &(t, w) in &idf {
                    if let Ok(i) = chunk.terms.binary_search_by_key(&t, |&(x, _)| x) {
                        let tf = chunk.terms[i].1 as f32;
                        let norm = K1 * (1.0 - B + B * chunk.len as f32 / avg.max(f32::EPSILON));
                        bm25 += w * tf * (K1 + 1.0) / (tf + norm);
                    }
                }
                dense.push(cosine);
                lexical.push(bm25);
                hits.push(Hit {
                    path: path.clone(),
                    start: chunk.start,
                    end: chunk.end,
                    cosine,
                    score: 0.0,
                });
            }
        }
        let fused = cairn_select::rank::hybrid_scores(&dense, &lexical);
        for (h, s) in hits.iter_mut().zip(fused) {
            h.score = s;
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.path.cmp(&b.path))
                .then(a.start.cmp(&b.start))
        });
        hits
    }
}

/// A window ranked for a query.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// Cosine similarity of the query and the window.
    pub cosine: f32,
    /// Dense and BM25 scores, standardised and fused: what orders the hits.
    pub score: f32,
}

/// The files the index may hold, by display path, in walk order; and how many entries the
/// walk could not read.
fn walk(ws: &Workspace, cancel: &CancellationToken) -> (Vec<(String, WorkspacePath)>, usize) {
    let mut out = Vec::new();
    let mut errors = 0;
    let stop = || cancel.is_cancelled();
    for root in ws.roots() {
        let Some(start) = root.to_str().and_then(|r| ws.resolve(r).ok()) else {
            errors += 1;
            continue;
        };
        match ws.walk_sorted(&start, &WalkOptions::default(), &stop) {
            Ok(walked) => {
                errors += walked.errors;
                for path in walked.files {
                    if readable(ws, &path) {
                        out.push((path.display_path(), path));
                    }
                }
            }
            Err(_) => errors += 1,
        }
    }
    (out, errors)
}

/// The modification time and size of each walked file (`None` when it is gone), on one thread
/// per core: at every query this is most of the freshness check's time.
fn stat_all(ws: &Workspace, walked: &[(String, WorkspacePath)]) -> Vec<Option<(u64, u64)>> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let per = walked.len().div_ceil(threads).max(256);
    let stat = |part: &[(String, WorkspacePath)]| -> Vec<Option<(u64, u64)>> {
        part.iter()
            .map(|(_, p)| {
                ws.stat(p)
                    .ok()
                    .map(|st| (st.modified_unix.unwrap_or(0), st.len))
            })
            .collect()
    };
    if walked.len() <= per {
        return stat(walked);
    }
    std::thread::scope(|scope| {
        let parts: Vec<_> = walked
            .chunks(per)
            .map(|part| scope.spawn(move || stat(part)))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Whether the user's rules let them read `path` outright: protected files (secrets) are never
/// indexed, even while an approval to read one is held.
pub(crate) fn readable(ws: &Workspace, path: &WorkspacePath) -> bool {
    matches!(
        ws.access_of(path, Operation::Read),
        Access::Allow | Access::Ask
    ) && ws.may_read(path)
}

/// What was read of a file.
struct ReadFile {
    text: Option<String>,
    hash: [u8; 32],
    kind: Kind,
    cut: bool,
}

/// The first [`MAX_FILE_BYTES`] of `path` through the scope (whole lines when cut), its hash and
/// kind; `None` when it cannot be read (gone, or refused).
fn read_file(ws: &Workspace, path: &WorkspacePath) -> Option<ReadFile> {
    let file = ws.open_read(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    let cut = bytes.len() as u64 > MAX_FILE_BYTES;
    if cut {
        // The last line may be cut anywhere, even inside a character: it is dropped.
        let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    let hash: [u8; 32] = Sha256::digest(&bytes).into();
    if bytes.iter().take(BINARY_SNIFF).any(|&b| b == 0) {
        return Some(ReadFile {
            text: None,
            hash,
            kind: Kind::Binary,
            cut: false,
        });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Some(ReadFile {
            text: Some(text),
            hash,
            kind: Kind::Text,
            cut,
        }),
        Err(_) => Some(ReadFile {
            text: None,
            hash,
            kind: Kind::NotText,
            cut: false,
        }),
    }
}

/// The text of `path` as indexing reads it (its first [`MAX_FILE_BYTES`]); `None` when it cannot
/// be read or is not text.
pub(crate) fn read_text(ws: &Workspace, path: &WorkspacePath) -> Option<String> {
    read_file(ws, path)?.text
}

/// The windows of `text`: (first line, last line, text), blank lines trimmed from both ends,
/// all-blank windows left out.
pub(crate) fn windows(text: &str) -> Vec<(u32, u32, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let end = (start + WINDOW).min(lines.len());
        let mut a = start;
        let mut b = end;
        while a < b && lines[a].trim().is_empty() {
            a += 1;
        }
        while b > a && lines[b - 1].trim().is_empty() {
            b -= 1;
        }
        if a < b {
            out.push((
                u32::try_from(a + 1).unwrap_or(u32::MAX),
                u32::try_from(b).unwrap_or(u32::MAX),
                lines[a..b].join("\n"),
            ));
        }
        if end == lines.len() {
            break;
        }
        start += STEP;
    }
    out
}

/// The text the embedder reads for a window: its path, then its lines, cut to
/// [`MAX_EMBED_CHARS`].
fn embed_text(path: &str, body: &str) -> String {
    format!("{path}\n{body}")
        .chars()
        .take(MAX_EMBED_CHARS)
        .collect()
}

/// BM25 length and hashed term counts of `text`, sorted by term.
fn terms(text: &str) -> (u32, Vec<(u64, u32)>) {
    let tokens = tokenize(text);
    let mut tf: HashMap<u64, u32> = HashMap::new();
    for t in &tokens {
        *tf.entry(term_hash(t)).or_default() += 1;
    }
    let mut terms: Vec<(u64, u32)> = tf.into_iter().collect();
    terms.sort_unstable();
    (u32::try_from(tokens.len()).unwrap_or(u32::MAX), terms)
}

/// FNV-1a of a term: stable across runs and builds, so the hashes can be stored.
fn term_hash(term: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in term.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn windows_overlap_and_trim_blank_lines() {
        let text: String = (1..=45).map(|i| format!("line {i}\n")).collect();
        let w = windows(&text);
        let ranges: Vec<(u32, u32)> = w.iter().map(|(a, b, _)| (*a, *b)).collect();
        assert_eq!(ranges, [(1, 30), (21, 45)]);
        let w = windows("\n\nfn a() {}\n\n");
        assert_eq!((w[0].0, w[0].1, w[0].2.as_str()), (3, 3, "fn a() {}"));
        assert!(windows("\n \n").is_empty());
        assert!(windows("").is_empty());
    }
}
