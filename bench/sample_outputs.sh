#!/usr/bin/env bash
# Usage: bench/sample_outputs.sh CHECKOUT OUT
# Runs the bundled sample through every command (validate, mutate, score, dimensions build,
# score (answers and the sample's canned replies) and prompts) with CHECKOUT/src on PYTHONPATH, from a copy at a fixed path (outputs embed
# paths), and writes OUT/hashes.txt: the sha256 of every output except runtime.json and the
# caches. Run it on two checkouts and diff the hashes (timings.jsonl holds durations) to
# show that a change leaves every command's outputs byte-identical. One run at a time: it
# uses the fixed paths /tmp/chainsrc and /tmp/chainout.
set -euo pipefail
exec 9>/tmp/chain.inner.lock; flock 9
FINAL=$2; rm -rf /tmp/chainsrc /tmp/chainout $FINAL; mkdir -p /tmp/chainsrc /tmp/chainout; cp -r $1/src /tmp/chainsrc/src; SRC=/tmp/chainsrc; OUT=/tmp/chainout
export PYTHONPATH=$SRC/src
S=$SRC/src/arcjudge/data/sample
aj() { python -m arcjudge.cli "$@" --no-progress --backend process --workers 2 > $OUT/log.$1 2>&1 || { echo "FAIL $1"; tail $OUT/log.$1; exit 1; }; }
aj validate --sample --samples 10 --generator arc-gen:$S/generators/arc-gen --out $OUT/val
aj mutate --tasks $S/tasks --source re-arc=re-arc:$S/re-arc --manifest $OUT/val --inputs 5 --out $OUT/mut
python - $S $OUT <<'PY'
import json, sys, pathlib
S, OUT = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
progs = []
for i, t in enumerate(sorted(p.stem for p in (S / "tasks").glob("*.json"))):
    progs.append({"id": f"p{i}", "task_id": t, "model": f"m{i%2}", "code": "def transform(g):\n    return [r[::-1] for r in g]\n"})
    progs.append({"id": f"q{i}", "task_id": t, "model": f"m{i%2}", "response": "Here:\n```python\ndef transform(g):\n    return g[::-1]\n```\n"})
(OUT / "programs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in progs))
PY
aj score --programs $OUT/programs.jsonl --tasks $S/tasks --verifiers $OUT/val --samples 5 --generator arc-gen:$S/generators/arc-gen --out $OUT/score
aj dimensions build --tasks $S/tasks --manifest $OUT/val --out $OUT/dims
python - $OUT <<'PY'
import json, sys, pathlib, random
OUT = pathlib.Path(sys.argv[1]); rng = random.Random(3); lines = []
for text in (OUT / "dims/instances.jsonl").read_text().splitlines():
    r = json.loads(text); d, k = r["dimension"], r["key"]
    if d == "definition":
        lines.append({"task_id": r["task_id"], "dimension": d, "model": "m", "run": 1, "answer": "def transform(g):\n    return g\n"}); continue
    if d == "classification": a = k["labels"] if rng.random() < .5 else ["valid"] * 5
    elif d == "generation": a = {"input": k["reference"]["input"], "output": k["reference"]["output"]} if k.get("reference") else {"input": [[1]], "output": [[1]]}
    elif d == "editing": a = k.get("reference_edit") or {"input": [[1]], "output": [[2]]}
    elif d == "output_grid": a = k["test_outputs"] if rng.random() < .5 else [[[0]] for _ in k["test_outputs"]]
    else: a = {"input": k["input"]}
    lines.append({"task_id": r["task_id"], "dimension": d, "model": "m", "run": 1, "answer": a})
(OUT / "answers.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
PY
aj dimensions score --instances $OUT/dims/instances.jsonl --answers $OUT/answers.jsonl --out $OUT/dscore
python -m arcjudge.cli dimensions prompts --instances $OUT/dims/instances.jsonl --tasks $S/tasks --out $OUT/prompts.jsonl > $OUT/log.prompts
aj dimensions score --instances $OUT/dims/instances.jsonl --replies $S/replies.jsonl --out $OUT/rscore
cd $OUT && find . -type f ! -name 'log.*' ! -name runtime.json ! -name '*.sqlite' | sort | xargs sha256sum > hashes.txt
mv /tmp/chainout $FINAL; echo ok
