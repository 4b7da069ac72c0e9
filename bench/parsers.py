"""The Python parsers Tributary's readers are compared with (bench/src/parsers.rs).

Usage: python parsers.py FORMAT ROUNDS FILE...
  FORMAT  mt940 (the mt-940 package) or ofx (ofxtools: parse and convert)

Parses every FILE ROUNDS times and prints one JSON object: for each file, the
median seconds one parse took, or null when the parser cannot read it or
finds no transaction in it (such a file is left out of the comparison, not
counted against either side).
"""

import json
import statistics
import sys
import time
import warnings


def mt940_parser():
    import mt940

    def parse(path):
        # The package reads lazily in places: touch every transaction.
        return sum(1 for _ in mt940.parse(path))

    return parse


def ofx_parser():
    from ofxtools.Parser import OFXTree

    def parse(path):
        tree = OFXTree()
        tree.parse(path)
        statements = tree.convert().statements
        return sum(len(s.transactions or []) for s in statements)

    return parse


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("mt940", "ofx"):
        sys.exit(__doc__)
    parse = {"mt940": mt940_parser, "ofx": ofx_parser}[sys.argv[1]]()
    rounds = int(sys.argv[2])
    warnings.simplefilter("ignore")
    seconds = {}
    for path in sys.argv[3:]:
        try:
            transactions = parse(path)
        except Exception:  # noqa: BLE001 - any failure means "cannot read it"
            transactions = 0
        if not transactions:
            seconds[path] = None
            continue
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            parse(path)
            times.append(time.perf_counter() - started)
        seconds[path] = statistics.median(times)
    json.dump(seconds, sys.stdout)


if __name__ == "__main__":
    main()
