#!/usr/bin/env python3
"""Write a JSON file of about a given size, valid or with a syntax error at its end.

    gen-json.py OUT SIZE [--broken]

The file is an array of small records, indented by two spaces as a model writes JSON
(about 14 bytes a line: 1 MB is about 75,000 lines), byte for byte what
json.dumps(records, indent=2) writes. With --broken the closing bracket
is replaced by a comma: the parser only finds the error after reading the whole file.
SIZE is a byte count with an optional K or M suffix (powers of 1024); the file comes out
at most one record (about 200 bytes) larger. Deterministic.
"""

import json
import sys


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def main():
    args = [a for a in sys.argv[1:] if a != "--broken"]
    if len(args) != 2:
        sys.exit(__doc__)
    out, size = args[0], parse_size(args[1])
    broken = "--broken" in sys.argv[1:]
    # The array as json.dumps(records, indent=2) writes it, built record by record so
    # the size is known exactly.
    items, written = [], len("[\n\n]")
    while written < size:
        n = len(items)
        record = {
            "id": n,
            "name": "item %d" % n,
            "tags": ["alpha", "beta"] if n % 3 else [],
            "price": round((n * 7919 % 10007) / 100, 2),
            "active": n % 5 != 0,
            "parent": n // 10 if n else None,
        }
        item = "  " + json.dumps(record, indent=2).replace("\n", "\n  ")
        items.append(item)
        written += len(item) + (2 if n else 0)
    text = "[\n" + ",\n".join(items) + "\n]"
    if broken:
        text = text[:-1] + ","
    with open(out, "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
