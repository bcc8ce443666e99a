//! The text tools of cairn-ml called as the model calls them, over a real temp workspace.
//! Expected values are independent of this code: textbook edit distances, NLTK's and
//! sacrebleu's documented BLEU outputs, the RAKE paper's worked example, ROUGE and WordPiece
//! splits worked by hand, and the token ids in OpenAI's tiktoken cookbook.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use cairn_ml::{Ml, ml_tools};
use cairn_select::embed::ModelSpec;
use cairn_test_support::tools::{call, call_with};
use cairn_toolkit::ToolSet;
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn ws() -> (tempfile::TempDir, ToolSet<Ml>) {
    let dir = tempfile::tempdir().unwrap();
    // The user's rules as the binary applies them: `.env` and other secrets are protected.
    let w = Workspace::new(vec![dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let t = ml_tools(Ml::new(Some(Arc::new(w)), ModelSpec::default()));
    (dir, t)
}

fn write(dir: &Path, name: &str, content: &[u8]) {
    std::fs::write(dir.join(name), content).unwrap();
}

async fn ok(t: &ToolSet<Ml>, name: &str, args: Value) -> String {
    let r = call(t, name, args).await;
    assert!(!r.is_error, "{name} failed: {}", r.text);
    r.text
}

async fn refused(t: &ToolSet<Ml>, name: &str, args: Value) -> String {
    let r = call(t, name, args).await;
    assert!(r.is_error, "{name} should have refused: {}", r.text);
    r.text
}

// edit_distance

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_distance_gives_the_textbook_distances() {
    let (_d, t) = ws();
    // kitten → sitting: two substitutions and an insertion.
    let out = ok(&t, "edit_distance", json!({"a": "kitten", "b": "sitting"})).await;
    assert!(out.contains("Levenshtein distance: 3"), "{out}");
    assert!(out.contains("Similarity: 0.5714"), "{out}"); // 1 − 3/7
    let out = ok(&t, "edit_distance", json!({"a": "flaw", "b": "lawn"})).await;
    assert!(out.contains("distance: 2"), "{out}");
    // A swap is two edits for Levenshtein, one for Damerau.
    let out = ok(&t, "edit_distance", json!({"a": "ab", "b": "ba"})).await;
    assert!(out.contains("distance: 2"), "{out}");
    let out = ok(
        &t,
        "edit_distance",
        json!({"a": "ab", "b": "ba", "damerau": true}),
    )
    .await;
    assert!(
        out.contains("Damerau (optimal string alignment) distance: 1"),
        "{out}"
    );
    // The optimal string alignment distance does not edit a swapped pair again: CA → ABC is 3
    // (unrestricted Damerau would say 2).
    let out = ok(
        &t,
        "edit_distance",
        json!({"a": "CA", "b": "ABC", "damerau": true}),
    )
    .await;
    assert!(out.contains("distance: 3"), "{out}");
    // Characters, not bytes.
    let out = ok(&t, "edit_distance", json!({"a": "café", "b": "cafe"})).await;
    assert!(
        out.contains("distance: 1") && out.contains("Similarity: 0.7500"),
        "{out}"
    );
    // Words: one insertion.
    let out = ok(
        &t,
        "edit_distance",
        json!({"a": "the cat sat", "b": "the cat sat down", "unit": "word"}),
    )
    .await;
    assert!(
        out.contains("distance: 1") && out.contains("3 words and 4 words"),
        "{out}"
    );
    let out = ok(&t, "edit_distance", json!({"a": "", "b": ""})).await;
    assert!(
        out.contains("distance: 0") && out.contains("Similarity: 1.0000"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_distance_compares_two_files_line_by_line() {
    let (d, t) = ws();
    write(d.path(), "a.txt", b"kitten\nsame\nflaw\n");
    write(d.path(), "b.txt", b"sitting\nsame\nlawn\nextra\n");
    let out = ok(
        &t,
        "edit_distance",
        json!({"path_a": "a.txt", "path_b": "b.txt"}),
    )
    .await;
    assert!(
        out.contains("3 and 4 lines; 4 pairs compared, 3 differ"),
        "{out}"
    );
    // 3 + 0 + 2 + 5 (the missing line is five insertions).
    assert!(out.contains("Total distance: 10"), "{out}");
    assert!(out.contains("| 1 | 3 | 0.5714 |"), "{out}");
    assert!(out.contains("| 3 | 2 | 0.5000 |"), "{out}");
    assert!(out.contains("| 4 | 5 | 0.0000 |"), "{out}");
    assert!(!out.contains("\n| 2 |"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_distance_refuses_what_it_cannot_compare() {
    let (d, t) = ws();
    let e = refused(&t, "edit_distance", json!({"a": "x"})).await;
    assert!(e.contains("give `b`"), "{e}");
    let e = refused(
        &t,
        "edit_distance",
        json!({"a": "x", "b": "y", "path_b": "b.txt"}),
    )
    .await;
    assert!(e.contains("not both"), "{e}");
    write(d.path(), "bin.dat", b"ab\0cd");
    let e = refused(&t, "edit_distance", json!({"a": "x", "path_b": "bin.dat"})).await;
    assert!(e.contains("binary"), "{e}");
    let e = refused(
        &t,
        "edit_distance",
        json!({"a": "x", "path_b": "missing.txt"}),
    )
    .await;
    assert!(e.contains("missing.txt"), "{e}");
    let e = refused(
        &t,
        "edit_distance",
        json!({"a": "x", "b": "y", "unit": "byte"}),
    )
    .await;
    assert!(e.contains("unit"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_edit_distance_stops() {
    let (_d, t) = ws();
    // 20000 × 20000 cells: seconds of work, stopped at the next row.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = call_with(
        &t,
        "edit_distance",
        json!({"a": "a".repeat(20_000), "b": "b".repeat(20_000)}),
        cancel,
    )
    .await;
    assert!(r.is_error && r.text.contains("cancel"), "{}", r.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_files_are_refused_by_every_reading_tool() {
    let (d, t) = ws();
    write(d.path(), ".env", b"TOKEN=hunter2\n");
    let calls = [
        ("edit_distance", json!({"a": "x", "path_b": ".env"})),
        (
            "bleu_score",
            json!({"candidate": "x", "reference_paths": [".env"]}),
        ),
        (
            "rouge_score",
            json!({"candidate_path": ".env", "reference": "x"}),
        ),
        ("detect_language", json!({"path": ".env"})),
        ("extract_keywords", json!({"path": ".env"})),
        ("count_tokens", json!({"path": ".env", "model": "gpt-4"})),
        (
            "truncate_tokens",
            json!({"path": ".env", "model": "gpt-4", "max_tokens": 1}),
        ),
    ];
    for (name, args) in calls {
        let e = refused(&t, name, args).await;
        assert!(e.contains(".env") && !e.contains("hunter2"), "{name}: {e}");
    }
}

// bleu_score

const H1: &str = "It is a guide to action which ensures that the military always obeys the commands of the party";
const R1A: &str =
    "It is a guide to action that ensures that the military will forever heed Party commands";
const R1B: &str = "It is the guiding principle which guarantees the military forces always being under the command of the Party";
const R1C: &str =
    "It is the practical guide for the army always to heed the directions of the party";
const H2: &str = "he read the book because he was interested in world history";
const R2A: &str = "he was interested in world history because he read the book";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bleu_matches_nltks_documented_examples() {
    let (_d, t) = ws();
    // nltk.translate.bleu_score.sentence_bleu's docstring: 0.5045666840058485.
    let out = ok(
        &t,
        "bleu_score",
        json!({"candidate": H1, "references": [R1A, R1B, R1C]}),
    )
    .await;
    assert!(out.contains("Sentence BLEU-4: 0.5046"), "{out}");
    assert!(out.contains("| 1 | 17 | 18 | 0.9444 |"), "{out}");
    assert!(out.contains("Brevity penalty: 1.0000"), "{out}");
    // corpus_bleu's docstring: 0.5920778868801042; the second segment has one reference.
    let out = ok(
        &t,
        "bleu_score",
        json!({
            "candidate": format!("{H1}\n{H2}"),
            "references": [format!("{R1A}\n{R2A}"), format!("{R1B}\n\n"), format!("{R1C}\n\n")]
        }),
    )
    .await;
    assert!(out.contains("Corpus BLEU-4: 0.5921"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bleu_matches_sacrebleus_readme_example_from_files() {
    let (d, t) = ws();
    // sacrebleu's README: BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944
    // hyp_len = 17 ref_len = 18), with its 13a tokenizer splitting off the periods.
    write(
        d.path(),
        "sys.txt",
        b"The dog bit the man.\nIt wasn't surprising.\nThe man had just bitten him.\n",
    );
    write(
        d.path(),
        "ref1.txt",
        b"The dog bit the man.\nIt was not unexpected.\nThe man bit him first.\n",
    );
    write(
        d.path(),
        "ref2.txt",
        b"The dog had bit the man.\nNo one was surprised.\nThe man had bitten the dog.\n",
    );
    let out = ok(
        &t,
        "bleu_score",
        json!({"candidate_path": "sys.txt", "reference_paths": ["ref1.txt", "ref2.txt"]}),
    )
    .await;
    assert!(out.contains("(48.53 on the 0–100 scale)"), "{out}");
    for p in ["0.8235", "0.5000", "0.4545", "0.3750"] {
        assert!(out.contains(p), "{p} missing: {out}");
    }
    assert!(
        out.contains("Brevity penalty: 0.9429 (candidate length 17, reference length 18)"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bleu_clips_counts_and_smooths_zeros() {
    let (_d, t) = ws();
    // Papineni et al. 2002, section 2.1: modified unigram precision 2/7, and no bigram matches.
    let args = json!({
        "candidate": "the the the the the the the",
        "references": ["The cat is on the mat.", "There is a cat on the mat."],
        "lowercase": true
    });
    let out = ok(&t, "bleu_score", args).await;
    assert!(out.contains("| 1 | 2 | 7 | 0.2857 |"), "{out}");
    assert!(
        out.contains("BLEU-4: 0.0000") && out.contains("smoothing \"exp\""),
        "{out}"
    );
    // exp: p2..p4 become 1/(2·6), 1/(4·5), 1/(8·4); the closest reference ("the cat is on the
    // mat .") has 7 tokens like the candidate, so BP = 1; BLEU = (2/7 · 1/12 · 1/20 · 1/32)^(1/4)
    // = 0.0781.
    let out = ok(
        &t,
        "bleu_score",
        json!({
            "candidate": "the the the the the the the",
            "references": ["The cat is on the mat.", "There is a cat on the mat."],
            "lowercase": true,
            "smoothing": "exp"
        }),
    )
    .await;
    assert!(out.contains("BLEU-4: 0.0781"), "{out}");
    let e = refused(
        &t,
        "bleu_score",
        json!({"candidate": "a\nb", "references": ["a"]}),
    )
    .await;
    assert!(e.contains("line-aligned"), "{e}");
    let e = refused(&t, "bleu_score", json!({"candidate": "a"})).await;
    assert!(e.contains("at least one reference"), "{e}");
}

// rouge_score

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rouge_gives_the_hand_worked_scores() {
    let (d, t) = ws();
    // Candidate 7 words, reference 6; 6 unigrams match (P 6/7, R 1, F 12/13); bigrams 4 of 6
    // and of 5 (F 8/11); the LCS is the whole reference (6).
    write(d.path(), "ref.txt", b"The cat was under the bed.");
    let out = ok(
        &t,
        "rouge_score",
        json!({"candidate": "the cat was found under the bed", "reference_path": "ref.txt"}),
    )
    .await;
    assert!(
        out.contains("| ROUGE-1 | 0.8571 | 1.0000 | 0.9231 |"),
        "{out}"
    );
    assert!(
        out.contains("| ROUGE-2 | 0.6667 | 0.8000 | 0.7273 |"),
        "{out}"
    );
    assert!(
        out.contains("| ROUGE-L | 0.8571 | 1.0000 | 0.9231 |"),
        "{out}"
    );
    // Word order only matters to ROUGE-2 and ROUGE-L: "b a" vs "a b" shares both unigrams,
    // no bigram, and a common subsequence of 1.
    let out = ok(
        &t,
        "rouge_score",
        json!({"candidate": "b a", "reference": "a b"}),
    )
    .await;
    assert!(
        out.contains("| ROUGE-1 | 1.0000 | 1.0000 | 1.0000 |"),
        "{out}"
    );
    assert!(
        out.contains("| ROUGE-2 | 0.0000 | 0.0000 | 0.0000 |"),
        "{out}"
    );
    assert!(
        out.contains("| ROUGE-L | 0.5000 | 0.5000 | 0.5000 |"),
        "{out}"
    );
}

// detect_language

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detect_language_names_common_languages() {
    let (d, t) = ws();
    let cases = [
        (
            "The quick brown fox jumps over the lazy dog while the children watch from the garden.",
            "eng",
            "English",
        ),
        (
            "Le renard brun rapide saute par-dessus le chien paresseux pendant que les enfants regardent.",
            "fra",
            "French",
        ),
        (
            "Der schnelle braune Fuchs springt über den faulen Hund, während die Kinder im Garten zusehen.",
            "deu",
            "German",
        ),
        (
            "Быстрая коричневая лиса прыгает через ленивую собаку, пока дети смотрят из сада.",
            "rus",
            "Russian",
        ),
        (
            "El rápido zorro marrón salta sobre el perro perezoso mientras los niños miran desde el jardín.",
            "spa",
            "Spanish",
        ),
    ];
    for (text, code, name) in cases {
        let out = ok(&t, "detect_language", json!({"text": text})).await;
        assert!(
            out.contains(&format!("Language: {name} ({code}")),
            "{text}: {out}"
        );
    }
    write(
        d.path(),
        "jp.txt",
        "今日はとても良い天気ですね。公園に散歩に行きましょう。".as_bytes(),
    );
    let out = ok(&t, "detect_language", json!({"path": "jp.txt"})).await;
    assert!(out.contains("(jpn"), "{out}");
    let out = ok(&t, "detect_language", json!({"text": "12345 67890 !!!"})).await;
    assert!(out.contains("No language detected"), "{out}");
}

// extract_keywords

const RAKE_ABSTRACT: &str = "Compatibility of systems of linear constraints over the set of natural numbers. Criteria of compatibility of a system of linear Diophantine equations, strict inequations, and nonstrict inequations are considered. Upper bounds for components of a minimal set of solutions and algorithms of construction of minimal generating sets of solutions for all types of systems are given. These criteria and the corresponding algorithms for constructing a minimal supporting set of solutions can be used in solving all the considered types of systems and systems of mixed types.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extract_keywords_reproduces_the_rake_papers_example() {
    let (d, t) = ws();
    write(d.path(), "abstract.txt", RAKE_ABSTRACT.as_bytes());
    let out = ok(
        &t,
        "extract_keywords",
        json!({"path": "abstract.txt", "top": 4}),
    )
    .await;
    // Rose et al. 2010, table 1.1: minimal generating sets 8.7, linear diophantine equations
    // 8.5, minimal supporting set 7.7, minimal set 4.7.
    assert!(
        out.contains("| 1 | minimal generating sets | 8.67 | 1 |"),
        "{out}"
    );
    assert!(
        out.contains("| 2 | linear diophantine equations | 8.50 | 1 |"),
        "{out}"
    );
    assert!(
        out.contains("| 3 | minimal supporting set | 7.67 | 1 |"),
        "{out}"
    );
    assert!(out.contains("| 4 | minimal set | 4.67 | 1 |"), "{out}");
    assert!(!out.contains("| 5 |"), "{out}");
    let out = ok(&t, "extract_keywords", json!({"text": "the of and to"})).await;
    assert!(out.contains("No keyphrases"), "{out}");
}

// count_tokens and truncate_tokens

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_counts_are_exact_and_claudes_approximate() {
    let (_d, t) = ws();
    // OpenAI's cookbook "How to count tokens with tiktoken": cl100k_base encodes
    // "tiktoken is great!" as [83, 1609, 5963, 374, 2294, 0]: t|ik|token| is| great|!
    let out = ok(
        &t,
        "count_tokens",
        json!({"text": "tiktoken is great!", "model": "gpt-4"}),
    )
    .await;
    assert!(
        out.starts_with("6 tokens for gpt-4 (cl100k_base, exact)"),
        "{out}"
    );
    let out = ok(
        &t,
        "truncate_tokens",
        json!({"text": "tiktoken is great!", "model": "gpt-3.5-turbo", "max_tokens": 4}),
    )
    .await;
    assert!(
        out.contains("Kept 4 of 6 tokens") && out.ends_with("\n\ntiktoken is"),
        "{out}"
    );
    // 35 characters at 3.5 per token.
    let out = ok(
        &t,
        "count_tokens",
        json!({"text": "a".repeat(35), "model": "claude-sonnet-4"}),
    )
    .await;
    assert!(
        out.starts_with("10 tokens for claude-sonnet-4 (APPROXIMATE"),
        "{out}"
    );
    let e = refused(
        &t,
        "count_tokens",
        json!({"text": "x", "model": "llama-unknown"}),
    )
    .await;
    assert!(e.contains("unknown model"), "{e}");
    let e = refused(
        &t,
        "count_tokens",
        json!({"text": "x", "model": "nobody/no-such-model"}),
    )
    .await;
    assert!(
        e.contains("no tokenizer.json of nobody/no-such-model"),
        "{e}"
    );
    let e = refused(&t, "truncate_tokens", json!({"text": "x", "max_tokens": 0})).await;
    assert!(e.contains("max_tokens"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_models_wordpiece_counts_and_cuts() {
    if !cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "with the embedding model in the hf cache",
    ) {
        return;
    }
    let (d, t) = ws();
    // WordPiece by hand over the model's vocab.txt: token ##ization of em ##bed ##ding ##s ,
    // hello world ! — 11, and [CLS] [SEP] around them.
    write(
        d.path(),
        "t.txt",
        b"Tokenization of embeddings, hello world!",
    );
    let out = ok(&t, "count_tokens", json!({"path": "t.txt"})).await;
    assert!(
        out.starts_with("11 tokens for sentence-transformers/all-MiniLM-L6-v2"),
        "{out}"
    );
    assert!(
        out.contains("adds 2 special tokens") && out.contains("13 in all"),
        "{out}"
    );
    let out = ok(
        &t,
        "count_tokens",
        json!({"text": "unaffable", "model": "sentence-transformers/all-MiniLM-L6-v2"}),
    )
    .await;
    assert!(out.starts_with("3 tokens"), "{out}"); // una ##ffa ##ble
    let out = ok(
        &t,
        "truncate_tokens",
        json!({"path": "t.txt", "max_tokens": 3}),
    )
    .await;
    assert!(
        out.contains("Kept 3 of 11 tokens") && out.ends_with("\n\nTokenization of"),
        "{out}"
    );
    let out = ok(
        &t,
        "truncate_tokens",
        json!({"path": "t.txt", "max_tokens": 11}),
    )
    .await;
    assert!(out.contains("nothing to cut"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_file_is_read_bounded_with_a_note() {
    let (d, t) = ws();
    // 2 MiB of "word " — only the first MiB is read.
    write(
        d.path(),
        "big.txt",
        "word ".repeat(2 * 1024 * 1024 / 5).as_bytes(),
    );
    let out = ok(
        &t,
        "count_tokens",
        json!({"path": "big.txt", "model": "claude"}),
    )
    .await;
    assert!(
        out.contains("only the first 1048576 bytes of big.txt were used"),
        "{out}"
    );
    assert!(out.contains("1048576 characters"), "{out}");
}
