"""llama.cpp's side of `cairn bench local`: load time, prompt-processing and generation tokens/s and
peak memory of llama.cpp (through llama-cpp-python) on one GGUF, as ONE JSON object on stdout.

    PY="$(scripts/llama-cpp-peer)"
    "$PY" scripts/llama-cpp-bench.py MODEL.gguf [--prompt-tokens 512] [--gen-tokens 128]
        [--threads N] [--runs 3]

Each run loads the model afresh (llama_cpp.Llama, CPU, n_batch 512, n_threads and n_threads_batch
= N, default os.cpu_count()), then
  - prompt processing: from a reset state (empty KV cache), evaluates a prompt of exactly
    --prompt-tokens tokens: a fixed English text in the model's own tokenizer, repeated and cut to
    the count (after BOS when the model adds one), in batches of 512;
  - generation: after a short prompt (not timed), generates exactly --gen-tokens tokens greedily
    (llama.cpp's greedy sampler, i.e. temperature 0), one decode per token, never stopping at EOS;
and closes the model. Reported figures are the medians over --runs runs. Peak RSS is
getrusage's ru_maxrss after all runs (the weights are mmapped; the pages touched count);
base_rss_mib is the same before the first load (interpreter, numpy, the library), so the model's
share is the difference.

Threads: llama.cpp is built with OpenMP here and its threads spin while they wait, so --threads
equal to the number of cores on a machine that is busy elsewhere collapses. On 2 cores shared
with a Rust build, SmolLM2-135M Q4_1 generated 16 to 23 tok/s at 2 threads against about 100 at
1 thread (65 to 70 with OMP_WAIT_POLICY=passive). Measure on a quiet machine, and read figures
from a loaded one as noise.

Errors (missing file, not a GGUF, a model llama.cpp cannot load) go to stderr, exit status 1.
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

TEXT = (
    "The river rises in the hills to the north of the town and runs south through farmland, "
    "woods and a string of small villages before it reaches the sea. For centuries it carried "
    "timber, grain and wool to the harbour, and the mills along its banks ground flour for the "
    "whole valley. When the railway arrived the barges disappeared, the mills fell silent one "
    "by one, and the towpath became a quiet walk for people and their dogs. Today the old "
    "warehouses by the bridge hold a library, a bakery and a workshop that repairs bicycles, "
    "and on summer evenings children swim in the pool below the weir while their parents talk "
    "on the grass. "
)
GEN_PROMPT = "Once upon a time, in a small town by a river,"


def fail(message):
    print(f"llama-cpp-bench: {message}", file=sys.stderr)
    sys.exit(1)


def peak_rss_mib():
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check_gguf(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if magic != b"GGUF":
        fail(f"{path}: not a GGUF file (magic {magic!r}, expected b'GGUF')")


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def prompt_tokens(llm, count):
    """Exactly `count` tokens: BOS when the model adds one, then TEXT repeated and cut."""
    prefix = llm.tokenize(b"", add_bos=True, special=False)
    body = llm.tokenize(TEXT.encode(), add_bos=False, special=False)
    tokens = list(prefix)
    while len(tokens) < count:
        tokens.extend(body)
    return tokens[:count]


def one_run(llama_cpp, args, n_ctx):
    started = time.perf_counter()
    llm = llama_cpp.Llama(
        model_path=args.gguf,
        n_ctx=n_ctx,
        n_batch=512,
        n_ubatch=512,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        n_gpu_layers=0,
        logits_all=False,
        verbose=False,
    )
    load_s = time.perf_counter() - started
    try:
        n_ctx_train = llama_cpp.llama_model_n_ctx_train(llm.model)
        if n_ctx_train > 0 and n_ctx > n_ctx_train:
            fail(f"--prompt-tokens {args.prompt_tokens} and --gen-tokens {args.gen_tokens} "
                 f"need a context of {n_ctx}, more than the model's {n_ctx_train}")

        # Prompt processing, from an empty KV cache (eval drops everything past n_tokens = 0).
        prompt = prompt_tokens(llm, args.prompt_tokens)
        llm.reset()
        started = time.perf_counter()
        llm.eval(prompt)
        llama_cpp.llama_synchronize(llm.ctx)
        pp_s = time.perf_counter() - started

        # Generation: a short prompt, then exactly gen_tokens greedy tokens, EOS or not.
        llm.reset()
        llm.eval(llm.tokenize(GEN_PROMPT.encode(), add_bos=True, special=False))
        greedy = llama_cpp.llama_sampler_init_greedy()
        try:
            started = time.perf_counter()
            for _ in range(args.gen_tokens):
                token = llama_cpp.llama_sampler_sample(greedy, llm.ctx, -1)
                llm.eval([token])
            llama_cpp.llama_synchronize(llm.ctx)
            tg_s = time.perf_counter() - started
        finally:
            llama_cpp.llama_sampler_free(greedy)
    finally:
        llm.close()
    return load_s, args.prompt_tokens / pp_s, args.gen_tokens / tg_s


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gguf", help="the GGUF model file")
    parser.add_argument("--prompt-tokens", type=positive, default=512)
    parser.add_argument("--gen-tokens", type=positive, default=128)
    parser.add_argument("--threads", type=positive, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=positive, default=3)
    args = parser.parse_args()

    check_gguf(args.gguf)
    try:
        import llama_cpp
    except ImportError as e:
        fail(f"cannot import llama_cpp ({e}); run it with the python scripts/llama-cpp-peer prints")

    # Room for the longer of the two phases (the generation prompt is a dozen tokens), rounded up;
    # the same context cairn's side runs in (its engine keeps one position free after a prompt,
    # hence the one more).
    needed = max(args.prompt_tokens + 1, args.gen_tokens + 64)
    n_ctx = max(512, -(-needed // 256) * 256)

    base_rss = peak_rss_mib()
    loads, pps, tgs = [], [], []
    for _ in range(args.runs):
        try:
            load_s, pp, tg = one_run(llama_cpp, args, n_ctx)
        except (ValueError, RuntimeError) as e:
            fail(f"{args.gguf}: {e}")
        loads.append(load_s)
        pps.append(pp)
        tgs.append(tg)
    peak_rss = peak_rss_mib()

    print(json.dumps({
        "engine": "llama.cpp",
        "version": llama_cpp.__version__,
        "threads": args.threads,
        "prompt_tokens": args.prompt_tokens,
        "gen_tokens": args.gen_tokens,
        "context": n_ctx,
        "load_s": round(statistics.median(loads), 4),
        "pp_tok_s": round(statistics.median(pps), 2),
        "tg_tok_s": round(statistics.median(tgs), 2),
        "peak_rss_mib": round(peak_rss, 1),
        "base_rss_mib": round(base_rss, 1),
    }))


if __name__ == "__main__":
    main()
