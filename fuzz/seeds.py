#!/usr/bin/env python3
"""Writes the fuzzing seeds: every statement file of ../shared/testdata by
format, plus the crafted shapes the readers must survive (the same ones as
crates/providers/src/import/hostile.rs): 50,000-deep nesting, a million flat
elements, long lines and endless continuations. Run from fuzz/, then
`cargo +nightly fuzz run <target> corpus/<target>`."""

import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent
TESTDATA = HERE.parent.parent / "shared" / "testdata"
OFX_HEADER = "OFXHEADER:100\nDATA:OFXSGML\n\n"
CAMT_OPEN = ('<?xml version="1.0"?><Document '
             'xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">')
MT940_OPEN = ":20:STMT\n:25:NL91ABNA0417164300\n:28C:1\n:60F:C260101EUR100,00\n"
MT940_ENTRY = ":61:2601020102D1,00NTRFNONREF\n"
MT940_CLOSE = ":62F:C260131EUR99,00\n-\n"

CRAFTED = {
    "ofx": {
        "deep-sgml.ofx": OFX_HEADER + "<OFX>" * 50_000,
        "deep-xml.ofx": '<?xml version="1.0"?>\n<OFX>' + "<A>" * 50_000 + "</A>" * 50_000 + "</OFX>",
        "flat.ofx": OFX_HEADER + "<OFX>" + "<A>1" * 1_000_000 + "</OFX>",
    },
    "camt": {
        "deep.xml": CAMT_OPEN + "<X>" * 50_000 + "</X>" * 50_000 + "</Document>",
        "flat.xml": CAMT_OPEN + "<X/>" * 1_000_000 + "</Document>",
    },
    "mt940": {
        "long-line.sta": MT940_OPEN + MT940_ENTRY + ":86:" + "x" * (1 << 20) + "\n" + MT940_CLOSE,
        "wrapped.sta": MT940_OPEN + MT940_ENTRY + ":86:start\n" + "/REMI/more text\n" * 100_000 + MT940_CLOSE,
        "many.sta": MT940_OPEN + (MT940_ENTRY + ":86:text\n") * 100_000 + MT940_CLOSE,
    },
    "csv": {
        "wide.csv": ",".join(["c"] * 1_000_000) + "\n",
        "long-field.csv": "Date,Amount,Description\n2026-01-02,1.00," + "x" * (1 << 20) + "\n",
        "open-quote.csv": 'Date,Amount,Description\n2026-01-02,1.00,"' + "x" * (1 << 20),
    },
}

SUFFIXES = {
    "ofx": (".ofx", ".qfx"),
    "camt": (".xml",),
    "mt940": (".sta", ".940", ".mt940", ".txt"),
    "csv": (".csv",),
}


def main() -> None:
    for target, files in CRAFTED.items():
        corpus = HERE / "corpus" / target
        corpus.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (corpus / name).write_text(text)
        for path in TESTDATA.rglob("*"):
            if path.is_file() and path.suffix.lower() in SUFFIXES[target]:
                shutil.copy(path, corpus / path.name)
        print(f"{target}: {sum(1 for _ in corpus.iterdir())} seeds in {corpus}")


if __name__ == "__main__":
    main()
