#!/usr/bin/env python3
"""Prints the Banking77 dev split (text,category CSV): every fifth train question of each intent,
the part scripts/build_banking_kb.py keeps out of the banking knowledge base, for tuning.

    scripts/banking77_dev.py [--banking77 DIR] > /tmp/banking77_dev.csv
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_banking_kb import ROOT, train_split  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--banking77", default=os.path.join(ROOT, "..", "shared", "data", "intent",
                                                       "banking77"))
    a = p.parse_args()
    _, dev = train_split(a.banking77)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["text", "category"])
    for intent in sorted(dev):
        for text in dev[intent]:
            w.writerow([text, intent])


if __name__ == "__main__":
    main()
