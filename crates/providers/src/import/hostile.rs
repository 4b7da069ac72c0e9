//! Crafted statement files for tests and the soak: deep nesting, huge flat
//! files, wide rows and long lines. Every reader must answer each with a
//! result or a clear error, on an ordinary 2 MiB thread stack (the size of a
//! server's blocking threads), never with a stack overflow or a panic.
//! `fuzz/seeds.py` writes the same shapes as fuzzing seeds.

const OFX_HEADER: &str = "OFXHEADER:100\nDATA:OFXSGML\n\n";

/// `<OFX>` opened `depth` times (SGML, as the review's crashing upload).
pub fn deep_ofx_sgml(depth: usize) -> Vec<u8> {
    format!("{OFX_HEADER}{}", "<OFX>".repeat(depth)).into_bytes()
}

/// OFX 2 (XML) aggregates nested `depth` deep and closed again.
pub fn deep_ofx_xml(depth: usize) -> Vec<u8> {
    format!(
        "<?xml version=\"1.0\"?>\n<?OFX OFXHEADER=\"200\"?>\n<OFX>{}{}</OFX>",
        "<A>".repeat(depth),
        "</A>".repeat(depth)
    )
    .into_bytes()
}

const CAMT_OPEN: &str = "<?xml version=\"1.0\"?><Document \
    xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\">";

/// A camt document whose root holds elements nested `depth` deep.
pub fn deep_camt(depth: usize) -> Vec<u8> {
    format!(
        "{CAMT_OPEN}{}{}</Document>",
        "<X>".repeat(depth),
        "</X>".repeat(depth)
    )
    .into_bytes()
}

/// `count` sibling leaves in an OFX body.
pub fn flat_ofx(count: usize) -> Vec<u8> {
    format!("{OFX_HEADER}<OFX>{}</OFX>", "<A>1".repeat(count)).into_bytes()
}

/// `count` empty sibling elements under a camt root.
pub fn flat_camt(count: usize) -> Vec<u8> {
    format!("{CAMT_OPEN}{}</Document>", "<X/>".repeat(count)).into_bytes()
}

/// A statement of `count` records, each correcting the one before.
pub fn ofx_corrections(count: usize) -> Vec<u8> {
    let mut records = String::new();
    for n in 0..count {
        records.push_str(&format!(
            "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260102<TRNAMT>-1.00<FITID>{n}"
        ));
        if n > 0 {
            records.push_str(&format!("<CORRECTFITID>{}<CORRECTACTION>REPLACE", n - 1));
        }
        records.push_str("</STMTTRN>");
    }
    format!(
        "{OFX_HEADER}<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR\
         <BANKACCTFROM><ACCTID>1234567</BANKACCTFROM>\
         <BANKTRANLIST>{records}</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    )
    .into_bytes()
}

const MT940_OPEN: &str = ":20:STMT\n:25:NL91ABNA0417164300\n:28C:1\n:60F:C260101EUR100,00\n";
const MT940_ENTRY: &str = ":61:2601020102D1,00NTRFNONREF\n";
const MT940_CLOSE: &str = ":62F:C260131EUR99,00\n-\n";

/// One entry whose `:86:` details are a single line of `length` bytes.
pub fn mt940_long_line(length: usize) -> Vec<u8> {
    format!(
        "{MT940_OPEN}{MT940_ENTRY}:86:{}\n{MT940_CLOSE}",
        "x".repeat(length)
    )
    .into_bytes()
}

/// One entry whose `:86:` details wrap over `lines` continuation lines.
pub fn mt940_wrapped_details(lines: usize) -> Vec<u8> {
    format!(
        "{MT940_OPEN}{MT940_ENTRY}:86:start\n{}{MT940_CLOSE}",
        "/REMI/more text\n".repeat(lines)
    )
    .into_bytes()
}

/// One statement of `count` entries.
pub fn mt940_many_fields(count: usize) -> Vec<u8> {
    format!(
        "{MT940_OPEN}{}{MT940_CLOSE}",
        format!("{MT940_ENTRY}:86:text\n").repeat(count)
    )
    .into_bytes()
}

/// A header row of `columns` columns that names no known layout.
pub fn csv_wide_header(columns: usize) -> Vec<u8> {
    let mut header = vec!["c"; columns].join(",");
    header.push('\n');
    header.into_bytes()
}

/// One row whose description is `length` bytes long.
pub fn csv_long_field(length: usize) -> Vec<u8> {
    format!(
        "Date,Amount,Description\n2026-01-02,1.00,{}\n",
        "x".repeat(length)
    )
    .into_bytes()
}

/// One row whose description opens a quote that never closes.
pub fn csv_open_quote(length: usize) -> Vec<u8> {
    format!(
        "Date,Amount,Description\n2026-01-02,1.00,\"{}",
        "x".repeat(length)
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{self, Format, MAX_NESTING};

    fn read(bytes: &[u8], format: Format) -> Result<usize, String> {
        import::parse(bytes, Some(format))
            .map(|statements| statements.len())
            .map_err(|err| err.to_string())
    }

    fn transactions(bytes: &[u8], format: Format) -> usize {
        let statements = import::parse(bytes, Some(format)).unwrap();
        statements.iter().map(|s| s.transactions.len()).sum()
    }

    #[test]
    fn deep_ofx_is_refused_naming_the_limit() {
        for bytes in [deep_ofx_sgml(50_000), deep_ofx_xml(50_000)] {
            let err = read(&bytes, Format::Ofx).unwrap_err();
            assert!(
                err.contains(&format!("deeper than {MAX_NESTING} levels")),
                "{err}"
            );
        }
    }

    #[test]
    fn deep_camt_is_refused_naming_the_limit() {
        let err = read(&deep_camt(50_000), Format::Camt).unwrap_err();
        assert!(
            err.contains(&format!("deeper than {MAX_NESTING} levels")),
            "{err}"
        );
    }

    #[test]
    fn nesting_up_to_the_limit_is_read() {
        // <OFX> and <Document> are levels of their own.
        let err = read(&deep_ofx_sgml(MAX_NESTING), Format::Ofx).unwrap_err();
        assert!(err.contains("holds no statement"), "{err}");
        let err = read(&deep_camt(MAX_NESTING - 1), Format::Camt).unwrap_err();
        assert!(err.contains("no camt"), "{err}");
        let err = read(&deep_camt(MAX_NESTING), Format::Camt).unwrap_err();
        assert!(err.contains("deeper than"), "{err}");
    }

    #[test]
    fn a_million_flat_elements_read_to_a_clear_answer() {
        let err = read(&flat_ofx(1_000_000), Format::Ofx).unwrap_err();
        assert!(err.contains("holds no statement"), "{err}");
        let err = read(&flat_camt(1_000_000), Format::Camt).unwrap_err();
        assert!(err.contains("no camt"), "{err}");
    }

    #[test]
    fn corrections_are_applied_in_linear_time() {
        // Every record but the last is corrected away. Checking each record
        // against a list of all corrections (as the reader once did) is 10^10
        // comparisons here: minutes instead of a moment.
        assert_eq!(transactions(&ofx_corrections(100_000), Format::Ofx), 1);
    }

    #[test]
    fn mt940_long_lines_and_endless_continuations_read() {
        assert_eq!(transactions(&mt940_long_line(8 << 20), Format::Mt940), 1);
        assert_eq!(
            transactions(&mt940_wrapped_details(1_000_000), Format::Mt940),
            1
        );
        assert_eq!(
            transactions(&mt940_many_fields(200_000), Format::Mt940),
            200_000
        );
    }

    #[test]
    fn csv_wide_rows_and_long_fields_read_or_fail_clearly() {
        let err = read(&csv_wide_header(1_000_000), Format::Csv).unwrap_err();
        assert!(err.contains("header row"), "{err}");
        assert_eq!(transactions(&csv_long_field(8 << 20), Format::Csv), 1);
        assert_eq!(transactions(&csv_open_quote(4 << 20), Format::Csv), 1);
    }
}
