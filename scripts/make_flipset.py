#!/usr/bin/env python3
"""Writes assets/eval/semantic_flips.tsv: pairs of questions for the L2 semantic cache's meaning
guard, written for Hotline (no data set's questions are used).

Each row: split, kind, stored, probe, expect.
  kind    action   an opposite action (turn on / turn off, upgrade / downgrade, add / remove, ...)
          negation the same statement negated ("has arrived" / "has not arrived")
          roles    source and destination swapped ("from checking to savings" / the reverse)
          control  the same question in other words (expect: hit)
  expect  miss (a flip: the stored answer must never be served for the probe) or hit (control)
  split   dev (may be looked at while changing the guard) or test (reported only; never used to
          change the guard). Rows are assigned by their word pair or sentence, alternately, so
          dev and test share no pair.

Run from the repository root: scripts/make_flipset.py > assets/eval/semantic_flips.tsv
"""
import itertools
import sys

# Opposite actions, each with the objects it is said of and sentence frames. "{v}" is the verb
# phrase, "{o}" the object.
ACTIONS = [
    (("turn on", "turn off"), ["international roaming", "voicemail", "call forwarding",
                               "mobile data"]),
    (("increase", "decrease"), ["my credit limit", "my daily withdrawal limit",
                                "my monthly payment"]),
    (("upgrade", "downgrade"), ["my plan", "my phone contract", "my internet package"]),
    (("subscribe to", "unsubscribe from"), ["the newsletter", "text alerts",
                                            "the premium channel package"]),
    (("add", "remove"), ["a user to my account", "my wife as an authorized user",
                         "a line to my family plan"]),
    (("activate", "deactivate"), ["my new card", "my sim card", "my account"]),
    (("enable", "disable"), ["two factor authentication", "paperless billing",
                             "automatic payments"]),
    (("lock", "unlock"), ["my card", "my phone", "my online banking"]),
    (("freeze", "unfreeze"), ["my card", "my account", "my credit"]),
    (("block", "unblock"), ["a phone number", "my card", "international calls"]),
    (("deposit", "withdraw"), ["cash at an atm", "a check", "money abroad"]),
    (("open", "close"), ["a savings account", "a joint account", "a business account"]),
    (("connect", "disconnect"), ["my landline", "my cable service", "my bank account to the app"]),
    (("install", "uninstall"), ["the router", "the mobile app", "the set top box"]),
    (("pause", "resume"), ["my subscription", "my membership", "my deliveries"]),
    (("start", "stop"), ["a direct debit", "my service", "recurring payments"]),
    (("buy", "sell"), ["shares in the app", "foreign currency", "a phone from you"]),
    (("accept", "decline"), ["the new terms", "the loan offer", "a payment request"]),
    (("link", "unlink"), ["my paypal account", "my credit card", "my loyalty card"]),
    (("opt in to", "opt out of"), ["marketing emails", "data sharing", "overdraft coverage"]),
    (("sign in to", "sign out of"), ["the app", "my account on all devices", "online banking"]),
    (("extend", "shorten"), ["my contract", "my loan term", "my return window"]),
    (("show", "hide"), ["my balance on the home screen", "my caller id",
                        "my card number in the app"]),
    (("include", "exclude"), ["my partner in the policy", "pending transactions in my balance",
                              "roaming in my bundle"]),
]
ACTION_FRAMES = [
    "how do i {v} {o}",
    "i want to {v} {o}",
    "can you help me {v} {o}",
    "is it possible to {v} {o} online",
    "i need to {v} {o} today",
]

# Statements and their negations.
NEGATIONS = [
    ("my package has arrived", "my package has not arrived"),
    ("i received my refund", "i did not receive my refund"),
    ("the payment went through", "the payment did not go through"),
    ("i can log in to my account", "i cannot log in to my account"),
    ("my card works abroad", "my card does not work abroad"),
    ("i recognize this charge on my statement", "i do not recognize this charge on my statement"),
    ("the technician came today", "the technician did not come today"),
    ("my transfer has been completed", "my transfer has not been completed"),
    ("i got the verification code", "i never got the verification code"),
    ("my new card has been activated", "my new card has not been activated"),
    ("the router is working", "the router is not working"),
    ("i authorized this payment", "i did not authorize this payment"),
    ("my order was delivered", "my order was not delivered"),
    ("i have internet at home", "i have no internet at home"),
    ("the app accepted my password", "the app did not accept my password"),
    ("my salary has been paid in", "my salary has not been paid in"),
    ("the top up was added to my balance", "the top up was not added to my balance"),
    ("i was charged for the delivery", "i was not charged for the delivery"),
    ("the exchange rate was applied", "the exchange rate was not applied"),
    ("my direct debit was taken", "my direct debit was not taken"),
    ("my number was ported", "my number was not ported"),
    ("i can make calls", "i can't make calls"),
    ("my cheque has cleared", "my cheque hasn't cleared"),
    ("the refund shows in my account", "the refund doesn't show in my account"),
    ("my sim card is recognized", "my sim card isn't recognized"),
    ("the atm gave me the cash", "the atm didn't give me the cash"),
    ("i have access to my statements", "i have no access to my statements"),
    ("my phone is connected to the network", "my phone is not connected to the network"),
    ("the email with my invoice arrived", "the email with my invoice never arrived"),
    ("my pin was changed", "my pin wasn't changed"),
]
NEGATION_FRAMES = [
    "{s}",
    "{s} what should i do",
    "hi {s} can you check",
]

# Two places, both orders.
ROLES = [
    ("transfer money from {a} to {b}", [("checking", "savings"), ("my account", "my son's account"),
                                        ("my euro account", "my dollar account")]),
    ("move my number from {a} to {b}", [("prepaid", "postpaid"), ("my old phone", "my new phone"),
                                        ("vodafone", "your network")]),
    ("switch my plan from {a} to {b}", [("basic", "premium"), ("monthly", "yearly"),
                                        ("unlimited", "the five gigabyte plan")]),
    ("convert {a} to {b}", [("dollars", "euros"), ("pounds", "yen"),
                            ("my points", "cash")]),
    ("forward my calls from {a} to {b}", [("my office phone", "my mobile"),
                                          ("my landline", "my cell phone"),
                                          ("my work number", "my home number")]),
    ("send money from {a} to {b}", [("my card", "my bank account"), ("paypal", "my card"),
                                    ("my business account", "my personal account")]),
    ("change my delivery from {a} to {b}", [("standard", "express"), ("monday", "friday"),
                                            ("home delivery", "store pickup")]),
    ("move my appointment from {a} to {b}", [("tuesday", "thursday"), ("the morning", "the afternoon"),
                                             ("this week", "next week")]),
]

# Controls: rewordings that keep the meaning (expect a hit), applied to the stored side of flips.
CONTROL_REWRITES = [
    ("how do i ", "how can i "),
    ("i want to ", "i would like to "),
    ("can you help me ", "could you help me "),
    ("is it possible to ", "can i "),
    ("i need to ", "i have to "),
]


def main():
    rows = []
    # Actions: dev and test alternate by word pair.
    for i, ((v1, v2), objects) in enumerate(ACTIONS):
        split = "dev" if i % 2 == 0 else "test"
        for j, (frame, obj) in enumerate(itertools.product(ACTION_FRAMES, objects)):
            if j % 2 == 1:  # half the frame/object combinations keep the set a reasonable size
                continue
            a = frame.format(v=v1, o=obj)
            b = frame.format(v=v2, o=obj)
            # Both directions of the pair: the stored question may be either one.
            stored, probe = (a, b) if j % 4 == 0 else (b, a)
            rows.append((split, "action", stored, probe, "miss"))
            for old, new in CONTROL_REWRITES:
                if stored.startswith(old) and j % 4 == 0:
                    rows.append((split, "control", stored, new + stored[len(old):], "hit"))
                    break
    for i, (pos, neg) in enumerate(NEGATIONS):
        split = "dev" if i % 2 == 0 else "test"
        for k, frame in enumerate(NEGATION_FRAMES):
            a = frame.format(s=pos)
            b = frame.format(s=neg)
            stored, probe = (a, b) if k % 2 == 0 else (b, a)
            rows.append((split, "negation", stored, probe, "miss"))
        rows.append((split, "control", "hi " + pos + " can you check",
                     "hello " + pos + " could you check", "hit"))
    for i, (frame, places) in enumerate(ROLES):
        split = "dev" if i % 2 == 0 else "test"
        for a, b in places:
            for prefix in ("how do i ", "i want to ", "please "):
                stored = prefix + frame.format(a=a, b=b)
                probe = prefix + frame.format(a=b, b=a)
                rows.append((split, "roles", stored, probe, "miss"))
            rows.append((split, "control", "how do i " + frame.format(a=a, b=b),
                         "how can i " + frame.format(a=a, b=b), "hit"))
    out = sys.stdout
    out.write("split\tkind\tstored\tprobe\texpect\n")
    for r in rows:
        out.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
