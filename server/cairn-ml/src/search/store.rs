//! The index on disk: one file, `index.bin`, in a directory per workspace (named by a hash of
//! its canonical roots) under the user's cache, never inside the workspace.
//!
//! The file is a header (magic, format version, the SHA-256 and length of the rest) and a
//! little-endian body: the model and dimension, then each file with its metadata and windows
//! (lines, BM25 terms, vector). A file whose magic, version, length or checksum is wrong, or
//! whose body does not parse to the end, is not trusted: the index is rebuilt and the caller
//! says so. It is written to a temporary file and renamed over the old one, so a crash leaves
//! the old index or the new, never half of one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::index::{Chunk, FileEntry, Index, Kind};

const MAGIC: &[u8; 8] = b"CAIRNSIX";
/// Bumped whenever the body's layout or the chunking changes: older files are rebuilt.
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 8 + 32;

/// The index file of the workspace with these canonical `roots`, under `dir`.
pub(crate) fn index_file(dir: &Path, roots: &[PathBuf]) -> PathBuf {
    let mut h = Sha256::new();
    for r in roots {
        h.update(r.as_os_str().as_encoded_bytes());
        h.update([0]);
    }
    let digest = h.finalize();
    let name: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    dir.join(name).join("index.bin")
}

/// What loading found.
pub(crate) enum Loaded {
    /// No index yet.
    Missing,
    /// A sound index.
    Index(Index),
    /// A file that could not be trusted, and why; it is rebuilt.
    Damaged(String),
}

/// Reads the index at `path`.
pub(crate) fn load(path: &Path) -> Loaded {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => return Loaded::Damaged(format!("it could not be read ({e})")),
    };
    match decode(&bytes) {
        Ok(index) => Loaded::Index(index),
        Err(why) => Loaded::Damaged(why),
    }
}

/// Writes `index` to `path` (temporary file, then rename), readable by the user alone: it
/// holds the words and vectors of files only they may read.
pub(crate) fn save(path: &Path, index: &Index) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    let bytes = encode(index);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(&bytes)?;
    drop(file);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn encode(index: &Index) -> Vec<u8> {
    let mut body = Vec::new();
    put_str(&mut body, &index.model);
    put_u32(&mut body, index.dim as u32);
    put_u32(&mut body, index.files.len() as u32);
    for (path, f) in &index.files {
        put_str(&mut body, path);
        body.extend_from_slice(&f.mtime.to_le_bytes());
        body.extend_from_slice(&f.size.to_le_bytes());
        body.extend_from_slice(&f.hash);
        body.extend_from_slice(&f.checked.to_le_bytes());
        body.push(match f.kind {
            Kind::Text => 0,
            Kind::Binary => 1,
            Kind::NotText => 2,
        });
        body.push(u8::from(f.cut));
        put_u32(&mut body, f.chunks.len() as u32);
        for c in &f.chunks {
            put_u32(&mut body, c.start);
            put_u32(&mut body, c.end);
            put_u32(&mut body, c.len);
            put_u32(&mut body, c.terms.len() as u32);
            for &(t, n) in &c.terms {
                body.extend_from_slice(&t.to_le_bytes());
                put_u32(&mut body, n);
            }
            for &x in &c.vector {
                body.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, VERSION);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&body));
    out.extend_from_slice(&body);
    out
}

fn decode(bytes: &[u8]) -> Result<Index, String> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err("it is not a cairn index file".into());
    }
    let mut r = Reader { bytes, at: 8 };
    let version = r.u32()?;
    if version != VERSION {
        return Err(format!(
            "it has format version {version}, this cairn writes {VERSION}"
        ));
    }
    let len = r.u64()?;
    let sum = r.take(32)?;
    let body = &bytes[HEADER..];
    if body.len() as u64 != len {
        return Err(format!(
            "it is {} bytes long where its header says {len} (cut short or appended to)",
            body.len()
        ));
    }
    if Sha256::digest(body).as_slice() != sum {
        return Err("its checksum does not match its content".into());
    }
    let mut r = Reader { bytes: body, at: 0 };
    let model = r.str()?;
    let dim = r.u32()? as usize;
    let count = r.u32()?;
    let mut files = BTreeMap::new();
    for _ in 0..count {
        let path = r.str()?;
        let mtime = r.u64()?;
        let size = r.u64()?;
        let hash: [u8; 32] = r.take(32)?.try_into().map_err(|_| "bad hash")?;
        let checked = r.u64()?;
        let kind = match r.take(1)?[0] {
            0 => Kind::Text,
            1 => Kind::Binary,
            2 => Kind::NotText,
            k => return Err(format!("unknown file kind {k}")),
        };
        let cut = r.take(1)?[0] != 0;
        let n = r.u32()?;
        let mut chunks = Vec::new();
        for _ in 0..n {
            let start = r.u32()?;
            let end = r.u32()?;
            let len = r.u32()?;
            let terms_n = r.u32()?;
            let mut terms = Vec::new();
            for _ in 0..terms_n {
                terms.push((r.u64()?, r.u32()?));
            }
            let raw = r.take(dim * 4)?;
            let vector = raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            chunks.push(Chunk {
                start,
                end,
                len,
                terms,
                vector,
            });
        }
        files.insert(
            path,
            FileEntry {
                mtime,
                size,
                hash,
                checked,
                kind,
                cut,
                chunks,
            },
        );
    }
    if r.at != body.len() {
        return Err("it has bytes after its last file".into());
    }
    Ok(Index::from_files(model, dim, files))
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

/// Bounds-checked reads: a damaged body is an error, never a panic or a huge allocation.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("it ends in the middle of an entry")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn str(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "a path is not UTF-8".into())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Index {
        let mut files = BTreeMap::new();
        files.insert(
            "src/a.rs".to_owned(),
            FileEntry {
                mtime: 7,
                size: 9,
                hash: [3; 32],
                checked: 8,
                kind: Kind::Text,
                cut: true,
                chunks: vec![Chunk {
                    start: 1,
                    end: 2,
                    len: 3,
                    terms: vec![(5, 1), (6, 2)],
                    vector: vec![0.5, -0.25],
                }],
            },
        );
        Index::from_files("m@r".into(), 2, files)
    }

    #[test]
    fn an_index_survives_the_disk_and_any_damage_is_caught() {
        let bytes = encode(&sample());
        let back = decode(&bytes).unwrap();
        assert_eq!(back.model, "m@r");
        let f = &back.files["src/a.rs"];
        assert_eq!((f.mtime, f.size, f.checked, f.cut), (7, 9, 8, true));
        assert_eq!(f.chunks[0].terms, [(5, 1), (6, 2)]);
        assert_eq!(f.chunks[0].vector, [0.5, -0.25]);
        assert_eq!(back.chunk_count(), 1);
        // One flipped bit anywhere, a cut, or an old version: refused, never a panic.
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad).is_err(), "byte {i}");
        }
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "cut at {n}");
        }
    }
}
