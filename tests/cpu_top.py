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
    print(f"{len(records)} tests, {sum(r['cpu'] for r in records):.1f} s CPU")
    print(f"\nthe {top} tests that took the most CPU:")
    for record in sorted(records, key=lambda r: -r["cpu"])[:top]:
        print(f"{record['cpu']:8.2f}  {record['test']}")
    print(f"\nthe {top} files that took the most CPU:")
    for name, cpu in files.most_common(top):
        print(f"{cpu:8.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
