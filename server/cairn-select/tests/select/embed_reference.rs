//! Checks the candle embedder against vectors computed by sentence-transformers itself.
//!
//! Needs the model in the Hugging Face cache (`scripts/embedding-model`), so it runs only with
//! `CAIRN_MODEL_TESTS=1`; otherwise it says why it skipped and passes.
//! `reference/make_reference.py` regenerates `reference/embeddings.json`.

use std::time::Instant;

use cairn_select::embed::{Embedder, ModelSpec};

fn model_tests_enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "to run the embedding model tests (after scripts/embedding-model)",
    )
}

struct Reference {
    text: String,
    embedding: Vec<f32>,
}

fn references() -> anyhow::Result<Vec<Reference>> {
    let raw = include_str!("../reference/embeddings.json");
    let json: serde_json::Value = serde_json::from_str(raw)?;
    let items = json["items"]
        .as_array()
        .ok_or_else(|| anyhow::format_err!("no items"))?;
    items
        .iter()
        .map(|item| {
            let text = item["text"]
                .as_str()
                .ok_or_else(|| anyhow::format_err!("no text"))?;
            let embedding: Vec<f32> = serde_json::from_value(item["embedding"].clone())?;
            Ok(Reference {
                text: text.to_owned(),
                embedding,
            })
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

#[test]
fn matches_sentence_transformers_singly_and_in_a_batch() -> anyhow::Result<()> {
    if !model_tests_enabled() {
        return Ok(());
    }
    let started = Instant::now();
    let embedder = Embedder::load(ModelSpec::default())?;
    eprintln!("load: {:?}", started.elapsed());
    assert_eq!(embedder.dim(), 384);

    let refs = references()?;
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let batch = embedder.embed(&texts)?;
    assert_eq!(batch.len(), refs.len());

    for (reference, batched) in refs.iter().zip(&batch) {
        let single = embedder.embed(&[reference.text.as_str()])?;
        let [single] = single.as_slice() else {
            anyhow::bail!("expected one vector")
        };
        assert_eq!(single.len(), embedder.dim());
        let norm: f32 = single.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not unit length: {norm}");

        let vs_reference = cosine(single, &reference.embedding);
        let vs_batch = cosine(single, batched);
        eprintln!(
            "cosine {vs_reference:.7} (batch vs single {vs_batch:.7}): {:?}",
            reference.text
        );
        assert!(
            vs_reference >= 0.999,
            "{:?}: cosine {vs_reference} against sentence-transformers",
            reference.text
        );
        assert!(
            vs_batch >= 0.99999,
            "{:?}: batch and single differ, cosine {vs_batch}",
            reference.text
        );
    }
    Ok(())
}

#[test]
fn embeds_nothing_and_a_long_batch() -> anyhow::Result<()> {
    if !model_tests_enabled() {
        return Ok(());
    }
    let embedder = Embedder::load(ModelSpec::default())?;
    assert!(embedder.embed(&[])?.is_empty());

    let one = "Find every call site of a function in the workspace and show the surrounding code.";
    // Warm the caches so the timings below measure steady-state work.
    embedder.embed(&[one])?;
    let started = Instant::now();
    embedder.embed(&[one])?;
    eprintln!("one sentence: {:?}", started.elapsed());

    let texts: Vec<String> = (0..32)
        .map(|i| {
            format!(
                "Tool number {i}: {}",
                "does a thing with files. ".repeat(i % 5 + 1)
            )
        })
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    let vectors = embedder.embed(&texts)?;
    eprintln!("batch of 32: {:?}", started.elapsed());
    assert_eq!(vectors.len(), 32);

    // Longer than max_seq_length: truncated, not an error.
    let long = "word ".repeat(2000);
    assert_eq!(embedder.embed(&[long.as_str()])?.len(), 1);
    Ok(())
}
