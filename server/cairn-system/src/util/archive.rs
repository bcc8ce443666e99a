//! Archives for the three archive tools: which kind a name says (tar, tar.gz, tar.zst, zip, and
//! single `.gz`/`.zst` files), walking their entries with every byte counted as it streams
//! (header sizes are never trusted), and the checks that make an entry dangerous: `..` or
//! absolute paths, links out of the extraction root, devices and FIFOs, and size or ratio bombs.

use std::cell::{Cell, RefCell};
use std::io::{self, Read};
use std::rc::Rc;

/// What a file name says an archive is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tar,
    TarGz,
    TarZst,
    Zip,
    /// One gzip-compressed file.
    Gz,
    /// One zstd-compressed file.
    Zst,
}

impl Kind {
    /// The kind `name` ends in, if any.
    pub(crate) fn of(name: &str) -> Option<Kind> {
        let n = name.to_ascii_lowercase();
        if n.ends_with(".tar.gz") || n.ends_with(".tgz") {
            Some(Kind::TarGz)
        } else if n.ends_with(".tar.zst") || n.ends_with(".tzst") || n.ends_with(".tar.zstd") {
            Some(Kind::TarZst)
        } else if n.ends_with(".tar") {
            Some(Kind::Tar)
        } else if n.ends_with(".zip") || n.ends_with(".jar") {
            Some(Kind::Zip)
        } else if n.ends_with(".gz") {
            Some(Kind::Gz)
        } else if n.ends_with(".zst") || n.ends_with(".zstd") {
            Some(Kind::Zst)
        } else {
            None
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Tar => "tar",
            Kind::TarGz => "tar.gz",
            Kind::TarZst => "tar.zst",
            Kind::Zip => "zip",
            Kind::Gz => "gzip",
            Kind::Zst => "zstd",
        }
    }

    /// The error for a name that says no kind.
    pub(crate) fn unknown(name: &str) -> String {
        format!(
            "cannot tell the archive kind of `{name}`: it must end in .tar, .tar.gz/.tgz, .tar.zst, .zip, .gz or .zst"
        )
    }
}

/// The caps every archive walk enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Entries in one archive.
    pub(crate) max_entries: usize,
    /// Uncompressed bytes of all entries.
    pub(crate) max_total: u64,
    /// Uncompressed bytes of one entry (extraction holds one entry in memory to write it).
    pub(crate) max_entry: u64,
    /// Uncompressed to compressed bytes, per zip entry and over a whole compressed stream.
    pub(crate) max_ratio: u64,
    /// Bytes below which the ratio is not judged (small files compress very well).
    pub(crate) ratio_floor: u64,
}

pub(crate) const LIMITS: Limits = Limits {
    max_entries: 10_000,
    max_total: 1 << 30,
    max_entry: 256 << 20,
    max_ratio: 100,
    ratio_floor: 1 << 20,
};

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryType {
    File,
    Dir,
    Symlink(String),
    Hardlink(String),
    /// A device, FIFO or socket (never extracted).
    Special(&'static str),
}

impl EntryType {
    pub(crate) fn label(&self) -> String {
        match self {
            EntryType::File => "file".to_owned(),
            EntryType::Dir => "dir".to_owned(),
            EntryType::Symlink(t) => format!("symlink → {t}"),
            EntryType::Hardlink(t) => format!("hardlink → {t}"),
            EntryType::Special(k) => (*k).to_owned(),
        }
    }
}

/// One entry as the archive describes it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The name as stored (shown; may be hostile).
    pub(crate) name: String,
    pub(crate) kind: EntryType,
    /// The size the header claims.
    pub(crate) size: u64,
    /// The compressed size (zip entries only).
    pub(crate) compressed: Option<u64>,
}

/// The entry's path below the extraction root, or why it may not be extracted.
pub(crate) fn safe_path(name: &str) -> Result<String, String> {
    if name.contains('\0') {
        return Err("a NUL byte in the name".to_owned());
    }
    let unified = name.replace('\\', "/");
    let bytes = unified.as_bytes();
    if unified.starts_with('/') || (bytes.len() >= 2 && bytes.get(1) == Some(&b':')) {
        return Err("an absolute path".to_owned());
    }
    let mut parts = Vec::new();
    for c in unified.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err("a `..` component (it would escape the target)".to_owned()),
            c => parts.push(c),
        }
    }
    Ok(parts.join("/"))
}

/// Whether a link at `link_path` (already safe) to `target` stays inside the root.
pub(crate) fn link_stays_inside(link_path: &str, target: &str) -> bool {
    let t = target.replace('\\', "/");
    if t.starts_with('/') || t.as_bytes().get(1) == Some(&b':') {
        return false;
    }
    let mut depth: Vec<&str> = link_path.split('/').filter(|c| !c.is_empty()).collect();
    depth.pop();
    for c in t.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            c => depth.push(c),
        }
    }
    true
}

/// For a link entry at `path` (already safe), whether it stays inside the extraction root: a
/// symlink's target is relative to the link's directory, a tar hard link's to the archive root.
pub(crate) fn link_inside(kind: &EntryType, path: &str) -> Option<bool> {
    match kind {
        EntryType::Symlink(t) => Some(link_stays_inside(path, t)),
        EntryType::Hardlink(t) => Some(safe_path(t).is_ok_and(|p| !p.is_empty())),
        _ => None,
    }
}

/// How far a walk got; shared with the counting readers.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// Bytes read from the archive file (compressed).
    pub(crate) compressed: Cell<u64>,
    /// Bytes of entry data read (uncompressed).
    pub(crate) total: Cell<u64>,
    /// Why the walk stopped, when a cap stopped it.
    pub(crate) stop: RefCell<Option<String>>,
}

/// The archive file, counting what is read from it.
struct Counting<R> {
    inner: R,
    progress: Rc<Progress>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let p = &self.progress.compressed;
        p.set(p.get() + n as u64);
        Ok(n)
    }
}

/// One entry's data, counting against the caps as it streams.
pub(crate) struct Capped<'a, R> {
    inner: R,
    progress: &'a Progress,
    limits: Limits,
    /// Whether the whole-stream ratio applies (a compressed tar or single file).
    stream_ratio: bool,
    /// The zip entry's compressed size, for its own ratio.
    entry_compressed: Option<u64>,
    name: &'a str,
    read: u64,
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        let total = self.progress.total.get() + n as u64;
        self.progress.total.set(total);
        let l = self.limits;
        let stop = if total > l.max_total {
            Some(format!(
                "the entries hold more than {} bytes uncompressed (the cap; stopped at `{}`)",
                l.max_total, self.name
            ))
        } else if self.read > l.max_entry {
            Some(format!(
                "`{}` is larger than {} bytes uncompressed (the per-entry cap)",
                self.name, l.max_entry
            ))
        } else if let Some(c) = self.entry_compressed
            && self.read > l.ratio_floor
            && self.read > c.saturating_mul(l.max_ratio)
        {
            Some(format!(
                "`{}` expands more than {}:1 ({} bytes from {c} compressed; a decompression bomb)",
                self.name, l.max_ratio, self.read
            ))
        } else if self.stream_ratio
            && total > l.ratio_floor
            && total > self.progress.compressed.get().saturating_mul(l.max_ratio)
        {
            Some(format!(
                "the archive expands more than {}:1 ({total} bytes from {} compressed so far, at `{}`; a decompression bomb)",
                l.max_ratio,
                self.progress.compressed.get(),
                self.name
            ))
        } else {
            None
        };
        if let Some(why) = stop {
            *self.progress.stop.borrow_mut() = Some(why.clone());
            return Err(io::Error::other(why));
        }
        Ok(n)
    }
}

/// What a visitor does with an entry's data: drains or keeps it.
pub(crate) type Visit<'v> = dyn FnMut(&Entry, &mut dyn Read) -> Result<(), String> + 'v;

/// Walks every entry of the archive `file` of `kind` (named `file_name`), calling `visit` with
/// each entry and its data, capped. Returns the progress; an `Err` says why the walk stopped.
pub(crate) fn walk(
    file: std::fs::File,
    kind: Kind,
    file_name: &str,
    limits: Limits,
    cancel: &tokio_util::sync::CancellationToken,
    visit: &mut Visit<'_>,
) -> Result<Rc<Progress>, String> {
    let progress = Rc::new(Progress::default());
    let counted = Counting {
        inner: io::BufReader::new(file),
        progress: Rc::clone(&progress),
    };
    let stopped = |e: String, p: &Progress| p.stop.borrow().clone().unwrap_or(e);
    match kind {
        Kind::Tar | Kind::TarGz | Kind::TarZst => {
            let compressed_stream = kind != Kind::Tar;
            let reader: Box<dyn Read> = match kind {
                Kind::TarGz => Box::new(flate2::read::MultiGzDecoder::new(counted)),
                Kind::TarZst => Box::new(
                    zstd::stream::read::Decoder::new(counted)
                        .map_err(|e| format!("not a zstd stream: {e}"))?,
                ),
                _ => Box::new(counted),
            };
            let mut archive = tar::Archive::new(reader);
            let entries = archive
                .entries()
                .map_err(|e| stopped(format!("not a readable tar: {e}"), &progress))?;
            let mut count = 0usize;
            for entry in entries {
                if cancel.is_cancelled() {
                    return Err("cancelled".to_owned());
                }
                let mut entry =
                    entry.map_err(|e| stopped(format!("a broken tar entry: {e}"), &progress))?;
                count += 1;
                if count > limits.max_entries {
                    return Err(format!(
                        "more than {} entries (the cap)",
                        limits.max_entries
                    ));
                }
                let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
                let link = || {
                    entry
                        .link_name_bytes()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default()
                };
                let t = entry.header().entry_type();
                let kind = if t.is_file() || t.is_contiguous() || t.is_gnu_sparse() {
                    EntryType::File
                } else if t.is_dir() {
                    EntryType::Dir
                } else if t.is_symlink() {
                    EntryType::Symlink(link())
                } else if t.is_hard_link() {
                    EntryType::Hardlink(link())
                } else if t.is_character_special() {
                    EntryType::Special("character device")
                } else if t.is_block_special() {
                    EntryType::Special("block device")
                } else if t.is_fifo() {
                    EntryType::Special("fifo")
                } else if t.is_pax_global_extensions() {
                    continue;
                } else {
                    EntryType::Special("unknown entry type")
                };
                let e = Entry {
                    name: name.clone(),
                    kind,
                    size: entry.header().size().unwrap_or(0),
                    compressed: None,
                };
                let mut capped = Capped {
                    inner: &mut entry,
                    progress: &progress,
                    limits,
                    stream_ratio: compressed_stream,
                    entry_compressed: None,
                    name: &name,
                    read: 0,
                };
                visit(&e, &mut capped).map_err(|e| stopped(e, &progress))?;
                // Whatever the visitor left is read through the caps too.
                io::copy(&mut capped, &mut io::sink())
                    .map_err(|e| stopped(e.to_string(), &progress))?;
            }
        }
        Kind::Zip => {
            let mut archive = zip::ZipArchive::new(io::BufReader::new(counted.inner.into_inner()))
                .map_err(|e| format!("not a readable zip: {e}"))?;
            if archive.len() > limits.max_entries {
                return Err(format!(
                    "{} entries, more than {} (the cap)",
                    archive.len(),
                    limits.max_entries
                ));
            }
            for i in 0..archive.len() {
                if cancel.is_cancelled() {
                    return Err("cancelled".to_owned());
                }
                let mut zf = archive
                    .by_index(i)
                    .map_err(|e| format!("a broken zip entry #{i}: {e}"))?;
                let name = String::from_utf8_lossy(zf.name_raw()).into_owned();
                let mode = zf.unix_mode().unwrap_or(0) & 0o170_000;
                let kind = match mode {
                    0o120_000 => {
                        // A symlink's target is its content; a long one is not a path.
                        let mut target = String::new();
                        (&mut zf)
                            .take(4096)
                            .read_to_string(&mut target)
                            .map_err(|e| format!("`{name}`: {e}"))?;
                        EntryType::Symlink(target)
                    }
                    0o010_000 => EntryType::Special("fifo"),
                    0o020_000 => EntryType::Special("character device"),
                    0o060_000 => EntryType::Special("block device"),
                    0o140_000 => EntryType::Special("socket"),
                    _ if zf.is_dir() => EntryType::Dir,
                    _ => EntryType::File,
                };
                let e = Entry {
                    name: name.clone(),
                    kind,
                    size: zf.size(),
                    compressed: Some(zf.compressed_size()),
                };
                let compressed = zf.compressed_size();
                let mut capped = Capped {
                    inner: &mut zf,
                    progress: &progress,
                    limits,
                    stream_ratio: false,
                    entry_compressed: Some(compressed),
                    name: &name,
                    read: 0,
                };
                visit(&e, &mut capped).map_err(|e| stopped(e, &progress))?;
                io::copy(&mut capped, &mut io::sink())
                    .map_err(|e| stopped(e.to_string(), &progress))?;
            }
        }
        Kind::Gz | Kind::Zst => {
            let reader: Box<dyn Read> = if kind == Kind::Gz {
                Box::new(flate2::read::MultiGzDecoder::new(counted))
            } else {
                Box::new(
                    zstd::stream::read::Decoder::new(counted)
                        .map_err(|e| format!("not a zstd stream: {e}"))?,
                )
            };
            let base = file_name.rsplit('/').next().unwrap_or(file_name);
            let name = base
                .rsplit_once('.')
                .map_or(base, |(stem, _)| stem)
                .to_owned();
            let e = Entry {
                name: name.clone(),
                kind: EntryType::File,
                size: 0,
                compressed: None,
            };
            let mut capped = Capped {
                inner: reader,
                progress: &progress,
                limits,
                stream_ratio: true,
                entry_compressed: None,
                name: &name,
                read: 0,
            };
            visit(&e, &mut capped).map_err(|e| stopped(e, &progress))?;
            io::copy(&mut capped, &mut io::sink()).map_err(|e| {
                stopped(
                    format!("not a readable {} stream: {e}", kind.name()),
                    &progress,
                )
            })?;
        }
    }
    Ok(progress)
}
