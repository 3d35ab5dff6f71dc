#!/usr/bin/env python3
"""Builds the banking line's knowledge base, assets/kb/banking/kb.csv.

Each article (assets/kb/banking/articles.tsv: intent, title, body, a few questions written from
the intent's meaning) gets as further example questions the Banking77 *train* questions of its
intent, except every fifth one of each intent (in file order), which is kept out as the dev split
(scripts/banking77_dev.py prints it) for tuning choices. The Banking77 test split is never read.

    scripts/build_banking_kb.py [--banking77 ../shared/data/intent/banking77] [--out FILE]
"""
import argparse
import collections
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def train_split(banking77_dir):
    """(kb_questions, dev) per intent from train.csv: every fifth question per intent is dev."""
    kb, dev = collections.defaultdict(list), collections.defaultdict(list)
    seen = collections.Counter()
    with open(os.path.join(banking77_dir, "train.csv"), newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            intent, text = row["category"], " ".join(row["text"].replace("|", " ").split())
            seen[intent] += 1
            (dev if seen[intent] % 5 == 0 else kb)[intent].append(text)
    return kb, dev


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--banking77", default=os.path.join(ROOT, "..", "shared", "data", "intent",
                                                       "banking77"))
    p.add_argument("--out", default=os.path.join(ROOT, "assets", "kb", "banking", "kb.csv"))
    a = p.parse_args()
    kb, _ = train_split(a.banking77)
    articles = []
    with open(os.path.join(ROOT, "assets", "kb", "banking", "articles.tsv"), encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            articles.append(row)
    missing = sorted(set(kb) - {r["intent"] for r in articles})
    if missing:
        sys.exit("articles.tsv has no article for: " + ", ".join(missing))
    with open(a.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(["id", "title", "intent", "body", "template", "questions"])
        for r in articles:
            own = [q.strip() for q in r["questions"].split("|") if q.strip()]
            questions = own + [q for q in kb[r["intent"]] if q not in own]
            w.writerow([r["intent"].rstrip("?") + "-1", r["title"], r["intent"], r["body"], "",
                        "|".join(questions)])
    print(f"{a.out}: {len(articles)} articles, "
          f"{sum(len(v) for v in kb.values())} Banking77 train questions (dev split kept out)")


if __name__ == "__main__":
    main()
