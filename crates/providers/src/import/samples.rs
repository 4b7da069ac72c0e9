//! Statement files as real banks send them, made to order for tests in
//! other crates (feature `testing`): the shapes the readers must import.

use tributary_domain::money::Decimal;

/// A daily camt.053.001.08 file as a real bank sends it: `Stmt/CreDtTm`
/// (optional in .08) left out, entries without booking or value dates (the
/// statement's date applies), a batch entry with only a bank transaction
/// code, and `entries` given as (reference, amount).
pub fn daily_camt053(day: u32, entries: &[(&str, &str)]) -> Vec<u8> {
    daily_camt053_opening(day, Decimal::new(100_000, 2), entries).0
}

/// `days` daily files of one account whose balances run on from day to day
/// (file name, content): each day books two identical card payments (twins)
/// and a transfer with its own `AcctSvcrRef`.
pub fn daily_camt053_series(days: u32) -> Vec<(String, Vec<u8>)> {
    let mut opening = Decimal::new(100_000, 2);
    (1..=days)
        .map(|day| {
            let reference = format!("<AcctSvcrRef>TRF-{day}</AcctSvcrRef>");
            let entries = [
                ("", "-12.50"),
                ("", "-12.50"),
                (reference.as_str(), "40.00"),
            ];
            let (file, closing) = daily_camt053_opening(day, opening, &entries);
            opening = closing;
            (format!("2026-03-{day:02}.xml"), file)
        })
        .collect()
}

/// A daily file opening at `opening`, and the balance it closes at.
fn daily_camt053_opening(
    day: u32,
    opening: Decimal,
    entries: &[(&str, &str)],
) -> (Vec<u8>, Decimal) {
    let date = format!("2026-03-{day:02}");
    let mut closing = opening;
    let mut xml = String::new();
    for (reference, amount) in entries {
        let value: Decimal = amount.parse().expect("a decimal amount");
        closing += value;
        let indicator = if value.is_sign_negative() {
            "DBIT"
        } else {
            "CRDT"
        };
        let absolute = value.abs();
        xml.push_str(&format!(
            "<Ntry>{reference}<Amt Ccy=\"EUR\">{absolute}</Amt><CdtDbtInd>{indicator}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>\
             <BkTxCd><Prtry><Cd>ATSISK</Cd></Prtry></BkTxCd><NtryDtls><Btch><NbOfTxs>3</NbOfTxs></Btch></NtryDtls></Ntry>"
        ));
    }
    let file = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08\">\
         <BkToCstmrStmt><GrpHdr><MsgId>M{day}</MsgId><CreDtTm>{date}T23:10:00</CreDtTm></GrpHdr>\
         <Stmt><Id>S{day}</Id><Acct><Id><IBAN>AT611904300234573201</IBAN></Id><Ownr><Nm>Ada Lovelace</Nm></Ownr>\
         <Svcr><FinInstnId><BICFI>BKAUATWW</BICFI></FinInstnId></Svcr></Acct>\
         <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{opening}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>{date}</Dt></Dt></Bal>\
         <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy=\"EUR\">{closing}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>{date}</Dt></Dt></Bal>\
         {xml}</Stmt></BkToCstmrStmt></Document>"
    );
    (file.into_bytes(), closing)
}

/// An OFX 1.x (SGML) bank statement of about `entries` records, large
/// enough to span many of the reader's buffers, with every rule the
/// statement rules apply: unique and repeated `FITID`s, identical twins
/// without one, a placeholder `FITID`, a record replaced and one deleted
/// (`CORRECTFITID`), one that replaces itself, a record whose amount does
/// not read, NUL and an entity in texts, a record after an early
/// `</BANKTRANLIST>`, and a non-ASCII name. `CHARSET:1252` with a `é`
/// byte when `windows_1252`; else UTF-8, naming no character set.
pub fn ofx_with_every_rule(entries: usize, windows_1252: bool) -> Vec<u8> {
    let mut body = String::new();
    for n in 0..entries {
        let day = 1 + n % 28;
        let cents = 100 + n % 977;
        let record = match n % 10 {
            // Twins: the same day, amount and text, no FITID.
            0 | 1 => format!(
                "<STMTTRN><TRNTYPE>POS<DTPOSTED>202603{day:02}<TRNAMT>-4.50<NAME>Bakery<MEMO>card</STMTTRN>"
            ),
            // A FITID the statement gives twice.
            2 => format!(
                "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>202603{day:02}<TRNAMT>-1.{cents:03}<FITID>SAME<NAME>Kiosk {n}</STMTTRN>"
            ),
            3 => format!(
                "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>202603{day:02}<TRNAMT>-2.00<FITID>NONREF<NAME>Placeholder {n}</STMTTRN>"
            ),
            4 => format!(
                "<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>202603{day:02}<TRNAMT>{cents}.00<FITID>R{n}<NAME>Caf\u{e9} &amp; Co<MEMO>memo\0{n}</STMTTRN>"
            ),
            _ => format!(
                "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>202603{day:02}<TRNAMT>-{}.{:02}<FITID>F{n}<NAME>Shop {}<MEMO>payment {n}</STMTTRN>",
                cents / 100,
                cents % 100,
                n % 13
            ),
        };
        body.push_str(&record);
        body.push('\n');
    }
    body.push_str(
        "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260330<TRNAMT>-9.99<FITID>F5C<CORRECTFITID>F5<CORRECTACTION>REPLACE<NAME>Shop corrected</STMTTRN>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260330<TRNAMT>0<FITID>F6D<CORRECTFITID>F6<CORRECTACTION>DELETE</STMTTRN>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260330<TRNAMT>-3.00<FITID>SELF<CORRECTFITID>SELF<CORRECTACTION>REPLACE<NAME>Itself</STMTTRN>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260330<TRNAMT>.<FITID>BAD<NAME>Unreadable</STMTTRN>\n\
         </BANKTRANLIST>\n\
         <STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260331<TRNAMT>-7.00<FITID>LATE<NAME>After the list</STMTTRN>\n",
    );
    let charset = if windows_1252 { "1252" } else { "NONE" };
    let text = format!(
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:{charset}\n\
         COMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n\
         <OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20260331<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>\n\
         <BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>\n\
         <STMTRS><CURDEF>EUR<BANKACCTFROM><BANKID>12345678<ACCTID>DE02120300000000202051<ACCTTYPE>CHECKING</BANKACCTFROM>\n\
         <BANKTRANLIST><DTSTART>20260301<DTEND>20260331\n{body}\
         <LEDGERBAL><BALAMT>1234.56<DTASOF>20260331</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    );
    if windows_1252 {
        encoding_rs::WINDOWS_1252.encode(&text).0.into_owned()
    } else {
        text.into_bytes()
    }
}
