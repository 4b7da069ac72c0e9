"""What ofxtools (an independent OFX parser, from PyPI) reads as investment
activity in each OFX file named on the command line: one JSON object on
stdout, by path, of either {"activity": [...]} or {"refused": "why"}.

Each activity is an aggregate of an investment statement's INVTRANLIST
other than INVBANKTRAN (a cash movement): its aggregate name, TOTAL (or
FRACCASH for a split) and UNITS (NEWUNITS - OLDUNITS for a split), as
exact decimal strings or null. tests/tests/ofx_investments.rs compares them
with what Tributary's reader makes of the same files.
"""

import json
import sys
import warnings

from ofxtools.Parser import OFXTree


def text(value):
    return None if value is None else str(value)


def activity(transaction):
    name = type(transaction).__name__
    if name == "SPLIT":
        units = None
        if transaction.oldunits is not None and transaction.newunits is not None:
            units = transaction.newunits - transaction.oldunits
        cash = transaction.fraccash
    else:
        units = getattr(transaction, "units", None)
        cash = getattr(transaction, "total", None)
    return {"aggregate": name, "total": text(cash), "units": text(units)}


def read(path):
    tree = OFXTree()
    try:
        tree.parse(path)
        ofx = tree.convert()
    except Exception as error:  # ofxtools refuses what it finds off-spec
        return {"refused": f"{type(error).__name__}: {error}"}
    found = []
    for statement in ofx.statements:
        if type(statement).__name__ != "INVSTMTRS":
            continue
        for transaction in statement.invtranlist or []:
            if type(transaction).__name__ != "INVBANKTRAN":
                found.append(activity(transaction))
    return {"activity": found}


def main():
    warnings.simplefilter("ignore")
    print(json.dumps({path: read(path) for path in sys.argv[1:]}))


if __name__ == "__main__":
    main()
