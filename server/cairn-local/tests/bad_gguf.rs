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
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(1u64.to_le_bytes()); // tensors
    out.extend(1u64.to_le_bytes()); // metadata entries
    string(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes()); // string
    string(&mut out, arch);
    string(&mut out, "token_embd.weight");
    out.extend(1u32.to_le_bytes()); // dimensions
    out.extend(32u64.to_le_bytes());
    out.extend(dtype.to_le_bytes());
    out.extend(0u64.to_le_bytes()); // offset
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.extend([0u8; 128]);
    out
}

async fn error_for(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    std::fs::write(&path, bytes).unwrap();
    let model = LocalModel::new(LocalSettings::new(ModelSource::Path(path)), None);
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
    first.expect_err("a bad file gives an error").to_string()
}

#[tokio::test]
async fn another_architecture_is_named_with_the_supported_ones() {
    let e = error_for(&gguf("mamba", 0)).await;
    assert!(
        e.contains(
            "architecture `mamba` is not supported by the local provider (it runs llama and qwen2)"
        ),
        "{e}"
    );
}

#[tokio::test]
async fn an_unknown_quantisation_is_named() {
    // 16 is IQ2_XXS, which candle does not implement.
    let e = error_for(&gguf("llama", 16)).await;
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
