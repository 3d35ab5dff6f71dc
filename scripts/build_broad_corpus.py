#!/usr/bin/env python3
"""Builds assets/asr/customer_service.txt, the broad customer-service corpus every domain language
model of the recognizer is mixed with (src/asr/lm_builder.h, LmMix).

One text per line, lower-cased, de-duplicated, from *train* splits only:
  - Banking77 train.csv, without the dev split (every fifth question of each intent, see
    scripts/build_banking_kb.py);
  - CLINC150 data_full.json `train` and `oos_train` (`val`/`oos_val` are the dev split, `test` and
    `oos_test` the report split);
  - the Bitext corpus' questions, without the demo model's held-out questions
    (assets/models/demo-agent.heldout.tsv);
  - the answers (article bodies) of the shipped knowledge bases.

    scripts/build_broad_corpus.py [--data ../shared/data]
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_banking_kb import ROOT, train_split  # noqa: E402


def clean(text):
    return " ".join(text.replace("|", " ").split()).lower()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "asr", "customer_service.txt"))
    a = p.parse_args()
    texts, counts = [], {}

    def add(source, items):
        n = 0
        for t in items:
            t = clean(t)
            if t:
                texts.append(t)
                n += 1
        counts[source] = n

    kb, _ = train_split(os.path.join(a.data, "intent", "banking77"))
    add("banking77 train (dev split kept out)", [q for qs in kb.values() for q in qs])
    with open(os.path.join(a.data, "intent", "clinc150", "data_full.json"), encoding="utf-8") as f:
        clinc = json.load(f)
    add("clinc150 train + oos_train", [t for key in ("train", "oos_train") for t, _ in clinc[key]])
    heldout = set()
    with open(os.path.join(ROOT, "assets", "models", "demo-agent.heldout.tsv"),
              encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            heldout.add(clean(row["question"]))
    with open(os.path.join(a.data, "support", "bitext", "customer_support.csv"), newline="",
              encoding="utf-8") as f:
        add("bitext questions (held-out questions kept out)",
            [r["instruction"] for r in csv.DictReader(f) if clean(r["instruction"]) not in heldout])
    bodies = []
    for kb_csv in ("bitext_kb.csv", os.path.join("banking", "kb.csv")):
        with open(os.path.join(ROOT, "assets", "kb", kb_csv), newline="", encoding="utf-8") as f:
            bodies += [r["body"] for r in csv.DictReader(f)]
    add("knowledge-base answers", bodies)
    seen, out = set(), []
    for t in texts:
        if t not in seen:
            seen.add(t)
            out.append(t)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    for k, v in counts.items():
        print(f"  {k}: {v}")
    print(f"{a.out}: {len(out)} distinct texts")


if __name__ == "__main__":
    main()
