#!/usr/bin/env python3
"""msg_knobs.py - every knob a message names exists (issue 17: "raise --gas" named no flag).

Scans the string literals of the sources that write status, event, log and error messages
(src/, tests and benchmarks left out) and checks each knob a message names:
  K32_NAME            a limit: #defined in include/ or src/
  kube32.io/NAME      an annotation: read by the code (the exact literal "kube32.io/NAME", or
                      a #define of it, appears outside messages)
  --flag              a command-line flag of one of kube32's tools: its literal "--flag" (or
                      "flag" in an option table) appears in src/ or cmd/; flags of kubectl
                      (a literal that says "kubectl" before the flag) are kubectl's own
Usage: msg_knobs.py ROOT. Exit 1 naming each message whose knob does not exist.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
SKIP = re.compile(r"(_test|_bench|_fuzz|fuzz_replay)\.c$")


def sources():
    for top in ("src", "cmd", "sdk", "include"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if (f.endswith(".c") or f.endswith(".h")) and not SKIP.search(f):
                    yield os.path.join(d, f)


LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
texts = {}
for path in sources():
    with open(path, encoding="utf-8", errors="replace") as fp:
        s = fp.read()
    # adjacent literals are one string
    s = re.sub(r'"\s*\n\s*"', "", s)
    texts[path] = s

defines = set()
literals = set()
for path, s in texts.items():
    defines.update(re.findall(r"^\s*#\s*define\s+(\w+)", s, re.M))
    literals.update(m.group(1) for m in LIT.finditer(s))

annotation_keys = {l for l in literals if re.fullmatch(r"kube32\.io/[a-z0-9.-]+", l)}
# keys the code writes or matches inside JSON templates
for l in literals:
    annotation_keys.update(re.findall(r'\\"(kube32\.io/[a-z0-9.-]+)\\"', l))
# the tags that start machine-read lines ("K32_BOOT profile=...", "K32_CMD:hw list")
line_tags = set()
for l in literals:
    m = re.match(r"(K32_[A-Z0-9_]+)[ :]", l)
    if m and m.group(1) not in defines:
        line_tags.add(m.group(1))
flag_literals = {l for l in literals if re.fullmatch(r"--?[a-z][a-z0-9-]*", l)}
option_words = set(literals)

# knobs that are not kube32's: status names and codes in messages are not hints
NOT_KNOBS = {"K32_OK"}

bad = []
checked = {"K32_": 0, "kube32.io/": 0, "--": 0}
for path, s in texts.items():
    for m in LIT.finditer(s):
        lit = m.group(1)
        rel = os.path.relpath(path, ROOT)
        for km in re.finditer(r"\b(K32_[A-Z0-9_]+)\b(\*?)", lit):
            k = km.group(1)
            # not knobs: status names, a family named with a '*', and the tags of
            # machine-read lines ("K32_BOOT profile=...", "K32_MCU ...")
            if k in NOT_KNOBS or k in line_tags or k.startswith("K32_ERR_") or km.group(2):
                continue
            checked["K32_"] += 1
            if k not in defines:
                bad.append(f"{rel}: names {k}, which is not #defined: \"{lit[:120]}\"")
        for a in re.findall(r"(kube32\.io/[a-z0-9.-]*[a-z0-9])", lit):
            if lit == a:
                continue  # the key itself
            checked["kube32.io/"] += 1
            if a not in annotation_keys and not a.endswith("/"):
                bad.append(f"{rel}: names annotation {a}, which no code reads: \"{lit[:120]}\"")
        for fm in re.finditer(r"(?:^|[\s(`'])(--[a-z][a-z0-9-]+)", lit):
            f = fm.group(1)
            before = lit[: fm.start(1)]
            if "kubectl" in before or lit == f or f == "--opt":  # --opt: a usage's placeholder
                continue
            checked["--"] += 1
            if f not in flag_literals and f[2:] not in option_words:
                bad.append(f"{rel}: names flag {f}, which no tool parses: \"{lit[:120]}\"")

for b in sorted(set(bad)):
    print(b)
print(
    f"msg_knobs: {checked['K32_']} limit names, {checked['kube32.io/']} annotations, "
    f"{checked['--']} flags checked in messages; {len(set(bad))} name no knob"
)
sys.exit(1 if bad else 0)
