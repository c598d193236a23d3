"""Rank the tests by the CPU time ``ACPGEN_TEST_CPU=FILE pytest ...`` wrote
to FILE (see tests/conftest.py): the total, the top N tests and the top
files. Usage: python tests/cpu_top.py FILE [N]"""

from __future__ import annotations

import collections
import json
import sys


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    top = int(argv[1]) if len(argv) > 1 else 20
    with open(argv[0], encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    files: collections.Counter[str] = collections.Counter()
    for record in records:
        files[record["test"].split("::")[0]] += record["cpu"]
    total = sum(r["cpu"] for r in records)
    children = sum(r.get("children", 0.0) for r in records)
    print(f"{len(records)} tests, {total:.1f} s CPU, of which {children:.1f} s in the processes they started")
    print(f"\nthe {top} tests that took the most CPU (total, in their processes):")
    for record in sorted(records, key=lambda r: -r["cpu"])[:top]:
        print(f"{record['cpu']:8.2f} {record.get('children', 0.0):8.2f}  {record['test']}")
    print(f"\nthe {top} files that took the most CPU:")
    for name, cpu in files.most_common(top):
        print(f"{cpu:8.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
