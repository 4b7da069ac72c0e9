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
