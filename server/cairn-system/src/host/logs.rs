//! Log files as the log tools reach them: inside the workspace through its scope (protected
//! files refused), or under a directory the user listed in `system.log_paths`, opened without
//! following a symlink out of it. Lines are read with a cap on their length, so a file with no
//! line ends (a sparse 10 GB file) never fills memory.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::system::System;

/// Bytes one read of a line consumes at most: past it, the rest of a line with no end in
/// sight (a sparse file's zeros) comes back as further cut lines, so callers get to check
/// their caps, time and cancellation.
const LINE_SCAN_LIMIT: usize = 1024 * 1024;

/// Files of one directory searched at most.
pub(crate) const MAX_FILES: usize = 200;

/// An opened log file.
pub(crate) struct LogFile {
    /// The path as shown to the model.
    pub shown: String,
    pub file: File,
    /// Gzip-compressed (a rotated `.gz`).
    pub gz: bool,
}

impl LogFile {
    /// Its lines' bytes, decompressed when it is a `.gz`.
    pub fn reader(self) -> Box<dyn BufRead + Send> {
        if self.gz {
            Box::new(BufReader::with_capacity(
                64 * 1024,
                flate2::read::MultiGzDecoder::new(BufReader::new(self.file)),
            ))
        } else {
            Box::new(BufReader::with_capacity(64 * 1024, self.file))
        }
    }
}

fn is_gz(name: &str) -> bool {
    name.ends_with(".gz")
}

/// The allowed directory `requested` lies under, canonical, when it is an absolute path below
/// one of `system.log_paths`.
fn allowed_dir(system: &System, requested: &Path) -> Option<PathBuf> {
    if !requested.is_absolute() {
        return None;
    }
    let canon = std::fs::canonicalize(requested).ok()?;
    system
        .settings
        .log_paths
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .find(|d| canon.starts_with(d))
}

fn refusal_outside(requested: &str) -> String {
    format!(
        "refused: {requested} is outside the workspace and not under a directory the user allows for logs (`system.log_paths` in the user configuration); give a workspace path, or ask the user to add the directory"
    )
}

/// Opens the log file `requested`.
pub(crate) fn open(system: &System, requested: &str) -> Result<LogFile, String> {
    let path = Path::new(requested);
    if let Some(dir) = allowed_dir(system, path) {
        return open_allowed(&dir, path, requested);
    }
    let Some(ws) = &system.workspace else {
        return Err(if path.is_absolute() {
            refusal_outside(requested)
        } else {
            format!(
                "no workspace is open, so {requested} cannot be read; give an absolute path under `system.log_paths`"
            )
        });
    };
    let wp = ws.resolve(requested).map_err(|e| {
        if path.is_absolute() {
            refusal_outside(requested)
        } else {
            e.to_string()
        }
    })?;
    let file = ws.open_read(&wp).map_err(|e| e.to_string())?;
    Ok(LogFile {
        shown: wp.display_path(),
        gz: is_gz(requested),
        file,
    })
}

/// Opens `path` (under `dir`, both as given and canonical) without following a final
/// symlink, and checks through the descriptor itself that what was opened lies under `dir`:
/// a link swapped in between the check and the open cannot lead out.
fn open_allowed(dir: &Path, path: &Path, requested: &str) -> Result<LogFile, String> {
    let canon = std::fs::canonicalize(path).map_err(|e| format!("{requested}: {e}"))?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits() | nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(&canon)
        .map_err(|e| format!("{requested}: {e}"))?;
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|e| format!("{requested}: {e}"))?;
    if !opened.starts_with(dir) {
        return Err(refusal_outside(requested));
    }
    let meta = file.metadata().map_err(|e| format!("{requested}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{requested} is not a regular file (a directory, device or pipe); give a log file"
        ));
    }
    Ok(LogFile {
        shown: canon.display().to_string(),
        gz: is_gz(requested),
        file,
    })
}

/// Whether `name` looks like a log (`app.log`, `app.log.1`, `app.log.2.gz`).
fn log_name(name: &str) -> bool {
    name.ends_with(".log") || name.contains(".log.")
}

/// The log files of the directory `requested` (`*.log`, rotated `*.log.N` and `.gz`), sorted,
/// as paths [`open`] takes; `None` when `requested` is not a directory.
pub(crate) fn list_dir(system: &System, requested: &str) -> Option<Result<Vec<String>, String>> {
    let path = Path::new(requested);
    if let Some(dir) = allowed_dir(system, path) {
        let canon = std::fs::canonicalize(path).ok()?;
        if !canon.is_dir() {
            return None;
        }
        if !canon.starts_with(&dir) {
            return Some(Err(refusal_outside(requested)));
        }
        let entries = match std::fs::read_dir(&canon) {
            Ok(e) => e,
            Err(e) => return Some(Err(format!("{requested}: {e}"))),
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| {
                let e = e.ok()?;
                // Symlinks are not followed out of the allowed directory: only regular files.
                e.file_type().ok()?.is_file().then_some(())?;
                let name = e.file_name().to_str()?.to_owned();
                log_name(&name).then(|| canon.join(name).display().to_string())
            })
            .collect();
        names.sort();
        names.truncate(MAX_FILES);
        return Some(Ok(names));
    }
    let ws = system.workspace.as_ref()?;
    let wp = ws.resolve(requested).ok()?;
    if !matches!(ws.kind_of(&wp), Ok(cairn_workspace::EntryKind::Dir)) {
        return None;
    }
    let entries = match ws.list_dir(&wp) {
        Ok(e) => e,
        Err(e) => return Some(Err(e.to_string())),
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .filter(|e| matches!(e.kind, cairn_workspace::EntryKind::File) && log_name(&e.name))
        .map(|e| wp.as_path().join(e.name).display().to_string())
        .collect();
    names.sort();
    names.truncate(MAX_FILES);
    Some(Ok(names))
}

/// Reads one line into `line` (without its line end), keeping at most `cap` bytes of it and
/// skipping the rest up to [`LINE_SCAN_LIMIT`]. Returns the bytes consumed (0 at the end) and
/// whether the line was cut.
pub(crate) fn read_line_capped(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(usize, bool)> {
    line.clear();
    let mut consumed = 0;
    let mut cut = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((consumed, cut));
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = cap.saturating_sub(line.len());
        if chunk.len() > room {
            cut = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        consumed += used;
        if done.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok((consumed, cut));
        }
        if consumed >= LINE_SCAN_LIMIT {
            return Ok((consumed, true));
        }
    }
}

/// A line's bytes as text, with a note when it was cut.
pub(crate) fn line_text(bytes: &[u8], cut: bool) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    if cut {
        text.push_str(" … (line cut)");
    }
    text
}

/// Reads at most `limit` bytes of `reader` into a vector.
pub(crate) fn read_at_most(reader: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    reader.take(limit).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn long_lines_are_cut_without_being_held() {
        let data = format!("short\r\n{}\nlast", "x".repeat(100_000));
        let mut r = BufReader::with_capacity(1024, data.as_bytes());
        let mut line = Vec::new();
        assert_eq!(read_line_capped(&mut r, &mut line, 10).unwrap(), (7, false));
        assert_eq!(line, b"short");
        let (n, cut) = read_line_capped(&mut r, &mut line, 10).unwrap();
        assert_eq!((n, cut, line.len()), (100_001, true, 10));
        read_line_capped(&mut r, &mut line, 10).unwrap();
        assert_eq!(line, b"last");
        assert_eq!(read_line_capped(&mut r, &mut line, 10).unwrap().0, 0);
        assert!(log_name("app.log") && log_name("app.log.2.gz") && !log_name("notes.txt"));
    }
}
