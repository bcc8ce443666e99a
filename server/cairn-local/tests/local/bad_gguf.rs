//! GGUF files the local provider does not run, written here byte by byte: each is refused with
//! a message naming what to do, before anything large is read. No model needed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cairn_agent::model::{Message, ModelClient, ModelRequest};
use cairn_local::{LocalModel, LocalSettings, ModelSource};
use futures::StreamExt;

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

/// A GGUF v3 with `general.architecture = arch` and one 32-element tensor of ggml type `dtype`.
fn gguf(arch: &str, dtype: u32) -> Vec<u8> {
    gguf_with_vocab(arch, dtype, 0)
}

/// The same with a vocabulary (`tokenizer.ggml.tokens`) of `vocab` one-letter tokens, and
/// `elements` elements in the tensor.
fn gguf_sized(arch: &str, dtype: u32, vocab: u64, elements: u64) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(1u64.to_le_bytes()); // tensors
    out.extend(if vocab > 0 { 2u64 } else { 1u64 }.to_le_bytes()); // metadata entries
    string(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes()); // string
    string(&mut out, arch);
    if vocab > 0 {
        string(&mut out, "tokenizer.ggml.tokens");
        out.extend(9u32.to_le_bytes()); // array
        out.extend(8u32.to_le_bytes()); // of strings
        out.extend(vocab.to_le_bytes());
        // Only as many tokens as fit a small file: the count alone must be refused.
        for _ in 0..vocab.min(1000) {
            string(&mut out, "a");
        }
    }
    string(&mut out, "token_embd.weight");
    out.extend(1u32.to_le_bytes()); // dimensions
    out.extend(elements.to_le_bytes());
    out.extend(dtype.to_le_bytes());
    out.extend(0u64.to_le_bytes()); // offset
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.extend([0u8; 128]);
    out
}

fn gguf_with_vocab(arch: &str, dtype: u32, vocab: u64) -> Vec<u8> {
    gguf_sized(arch, dtype, vocab, 32)
}

async fn error_for(bytes: &[u8]) -> String {
    error_with(bytes, |_| {}).await
}

/// The error for a file of `bytes`, with settings changed by `tune`. The directory holds only
/// the file afterwards: nothing was written next to it.
async fn error_with(bytes: &[u8], tune: impl FnOnce(&mut LocalSettings)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    std::fs::write(&path, bytes).unwrap();
    let mut settings = LocalSettings::new(ModelSource::Path(path.clone()));
    tune(&mut settings);
    let model = LocalModel::new(settings, None);
    let mut stream = model
        .stream(ModelRequest {
            system: String::new(),
            messages: vec![Message::User {
                text: "hi".into(),
                images: vec![],
            }],
            tools: vec![],
        })
        .await
        .unwrap();
    let first = stream.next().await.expect("an event");
    assert!(
        stream.next().await.is_none(),
        "the stream ends after the error"
    );
    let e = first.expect_err("a bad file gives an error").to_string();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is unchanged"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    e
}

#[tokio::test]
async fn another_architecture_is_named_with_the_supported_ones() {
    let e = error_for(&gguf("mamba", 0)).await;
    assert!(
        e.contains(
            "architecture `mamba` is not supported by the local provider (it runs llama, qwen2, qwen3"
        ),
        "{e}"
    );
}

#[tokio::test]
async fn an_unknown_quantisation_is_named() {
    // 31 was Q4_0_4_4, which llama.cpp no longer reads from files.
    let e = error_for(&gguf_with_vocab("llama", 31, 1)).await;
    assert!(e.contains("quantisation is not supported"), "{e}");
    assert!(e.contains("Q4_0"), "{e}");
}

#[tokio::test]
async fn a_file_that_is_not_gguf_says_so() {
    let e = error_for(b"<html>Not found</html>").await;
    assert!(e.contains("is not a readable GGUF file"), "{e}");
}

#[tokio::test]
async fn a_missing_file_is_named() {
    let model = LocalModel::new(
        LocalSettings::new(ModelSource::Path("/nonexistent/m.gguf".into())),
        None,
    );
    let mut stream = model
        .stream(ModelRequest {
            system: String::new(),
            messages: vec![],
            tools: vec![],
        })
        .await
        .unwrap();
    let e = stream.next().await.unwrap().unwrap_err().to_string();
    assert!(e.contains("cannot open /nonexistent/m.gguf"), "{e}");
}

#[tokio::test]
async fn a_vocabulary_of_ten_million_tokens_is_refused_naming_the_file_and_the_limit() {
    let e = error_for(&gguf_with_vocab("llama", 0, 10_000_000)).await;
    assert!(
        e.contains("model.gguf declares a vocabulary of 10000000"),
        "{e}"
    );
    assert!(
        e.contains(&format!("limit of {}", cairn_local::MAX_VOCAB)),
        "{e}"
    );
}

#[tokio::test]
async fn a_tensor_larger_than_the_file_is_refused_as_cut_short() {
    // 2^40 f32 elements: 4 TiB declared in a file of a few hundred bytes.
    let e = error_for(&gguf_sized("llama", 0, 1, 1 << 40)).await;
    assert!(e.contains("is cut short"), "{e}");
    assert!(e.contains("its tensors need 4398046511"), "{e}");
}

#[tokio::test]
async fn a_model_over_max_memory_mib_is_refused_with_both_figures() {
    // 16 Mi f32 elements (64 MiB), all present in the file.
    let mut bytes = gguf_sized("llama", 0, 1, 16 << 20);
    bytes.resize(bytes.len() + (64 << 20), 0);
    let e = error_with(&bytes, |s| s.max_memory_mib = Some(50)).await;
    assert!(e.contains("model.gguf: the model needs about"), "{e}");
    assert!(e.contains("and 50 MiB are available"), "{e}");
}

#[tokio::test]
async fn garbage_after_the_magic_is_refused_without_reading_past_the_file() {
    // A string length of 2^62 right after the counts.
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend((1u64 << 62).to_le_bytes());
    bytes.extend(b"xxxx");
    let e = error_for(&bytes).await;
    assert!(
        e.contains("declares a metadata string of 4611686018427387904"),
        "{e}"
    );
    let e = error_for(b"GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff").await;
    assert!(e.contains("declares tensors of"), "{e}");
}
