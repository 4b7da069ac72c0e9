//! Which account an imported statement's rows land in (docs/imports.md,
//! "Which account"), on both backends: an account column routes rows,
//! files naming no account are kept apart by layout, format and currency
//! or go where the user says, and accounts imported before stay found.
//! Every file here is built for the test, after what real exports do.

// Test code: a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used)]

use chrono::{TimeZone, Utc};
use tributary_domain::access::Viewer;
use tributary_domain::ids::{AccountId, UserId};
use tributary_domain::money::Decimal;
use tributary_providers::import::{
    self, Format, ImportSummary, ImportTarget, StoreError, TargetError, TargetField,
};
use tributary_storage::read::{self, TransactionFilter};
use tributary_storage::testing::on_every_backend;
use tributary_storage::{Database, users};

fn now() -> chrono::NaiveDateTime {
    Utc.with_ymd_and_hms(2026, 3, 21, 12, 0, 0)
        .unwrap()
        .naive_utc()
}

fn user(db: &Database, email: &str) -> UserId {
    users::create_personal_user(&mut db.conn().unwrap(), email, now())
        .unwrap()
        .id
}

fn import_into(
    db: &Database,
    user: UserId,
    file: &str,
    target: &ImportTarget,
) -> Result<ImportSummary, StoreError> {
    let statements = import::parse(file.as_bytes(), None).unwrap();
    import::store_into(&mut db.conn().unwrap(), user, statements, target, now())
}

fn import(db: &Database, user: UserId, file: &str) -> ImportSummary {
    import_into(db, user, file, &ImportTarget::Automatic).unwrap()
}

/// One stored account: its name, currency, mask, and its transactions'
/// count, signed sum and currencies.
#[derive(Debug, PartialEq)]
struct Stored {
    id: AccountId,
    name: String,
    currency: String,
    mask: Option<String>,
    count: usize,
    sum: String,
    currencies: Vec<String>,
}

fn stored(db: &Database, user: UserId) -> Vec<Stored> {
    let conn = &mut *db.conn().unwrap();
    let all = TransactionFilter {
        include_pending: true,
        ..Default::default()
    };
    read::list_accounts(conn, &Viewer::whole_user(user))
        .unwrap()
        .into_iter()
        .map(|account| {
            let rows = read::list_transactions(conn, account.id, &all, None, None).unwrap();
            let mut currencies: Vec<String> = rows.iter().map(|t| t.currency.clone()).collect();
            currencies.sort();
            currencies.dedup();
            Stored {
                id: account.id,
                name: account.name,
                currency: account.currency,
                mask: account.mask,
                count: rows.len(),
                sum: rows.iter().map(|t| t.amount).sum::<Decimal>().to_string(),
                currencies,
            }
        })
        .collect()
}

/// (name, currency, count, signed sum) of each stored account.
fn figures(db: &Database, user: UserId) -> Vec<(String, String, usize, String)> {
    stored(db, user)
        .into_iter()
        .map(|a| (a.name, a.currency, a.count, a.sum))
        .collect()
}

fn owned(rows: &[(&str, &str, usize, &str)]) -> Vec<(String, String, usize, String)> {
    rows.iter()
        .map(|(name, currency, count, sum)| {
            (
                (*name).to_owned(),
                (*currency).to_owned(),
                *count,
                (*sum).to_owned(),
            )
        })
        .collect()
}

/// A German savings-bank export (CSV-CAMT layout) of two accounts: the
/// `Auftragskonto` column names each row's account, one of them written
/// in groups of four; `Kontonummer/IBAN` is the other party's.
const AUFTRAGSKONTO: &str = "\"Auftragskonto\";\"Buchungstag\";\"Valutadatum\";\"Buchungstext\";\"Verwendungszweck\";\"Beguenstigter/Zahlungspflichtiger\";\"Kontonummer/IBAN\";\"BIC (SWIFT-Code)\";\"Betrag\";\"Waehrung\";\"Info\"\n\
\"DE02120300000000202051\";\"02.03.26\";\"02.03.26\";\"FOLGELASTSCHRIFT\";\"Strom Maerz\";\"Stadtwerke\";\"DE89370400440532013000\";\"COBADEFFXXX\";\"-84,00\";\"EUR\";\"Umsatz gebucht\"\n\
\"DE02 5001 0517 0137 0750 30\";\"03.03.26\";\"03.03.26\";\"GUTSCHRIFT\";\"Zinsen\";\"\";\"\";\"\";\"1,25\";\"EUR\";\"Umsatz gebucht\"\n\
\"DE02120300000000202051\";\"04.03.26\";\"04.03.26\";\"LOHN GEHALT\";\"Gehalt Maerz\";\"Arbeitgeber GmbH\";\"DE75512108001245126199\";\"SOGEDEFFXXX\";\"2.500,00\";\"EUR\";\"Umsatz gebucht\"\n\
\"DE02120300000000202051\";\"04.03.26\";\"04.03.26\";\"KARTENZAHLUNG\";\"Baeckerei\";\"Baeckerei\";\"\";\"\";\"-2,80\";\"EUR\";\"Umsatz gebucht\"\n\
\"DE02120300000000202051\";\"04.03.26\";\"04.03.26\";\"KARTENZAHLUNG\";\"Baeckerei\";\"Baeckerei\";\"\";\"\";\"-2,80\";\"EUR\";\"Umsatz gebucht\"\n\
\"DE02500105170137075030\";\"05.03.26\";\"05.03.26\";\"UMBUCHUNG\";\"Sparen\";\"Ich\";\"DE02120300000000202051\";\"BYLADEM1001\";\"200,00\";\"EUR\";\"Umsatz gebucht\"\n";

/// A bank's plain export: date, text, signed amount; no currency.
const BANK_A: &str = "Date,Description,Amount\n2026-03-02,Groceries,-42.10\n2026-03-03,Salary,2500.00\n2026-03-04,Rent,-900.00\n";

/// Another bank's export, with a currency column.
const BANK_B: &str = "Buchungstag;Verwendungszweck;Betrag;Währung\n02.03.2026;Miete;-750,00;EUR\n03.03.2026;Gehalt;1.800,00;EUR\n";

/// A US card export: charges negative, no currency anywhere.
const CARD_USD: &str = "Transaction Date,Description,Amount\n03/02/2026,NYC Coffee,-4.50\n03/03/2026,Bookshop,-23.99\n03/05/2026,Payment Thank You,100.00\n";

/// The same card a month later, overlapping by one row.
const CARD_USD_LATER: &str = "Transaction Date,Description,Amount\n03/05/2026,Payment Thank You,100.00\n04/01/2026,Subway,-2.90\n";

/// A US export stating its currency.
const STATES_USD: &str = "Date,Description,Amount,Currency\n2026-03-02,Hotel,-180.00,USD\n";

#[test]
fn an_account_column_routes_rows_to_one_account_per_iban() {
    on_every_backend(|db| {
        let user = user(db, "auftragskonto@example.com");
        let summary = import(db, user, AUFTRAGSKONTO);
        assert_eq!(
            (summary.statements, summary.accounts, summary.added),
            (2, 2, 6)
        );
        assert_eq!(summary.notes, Vec::<String>::new());
        let accounts = stored(db, user);
        assert_eq!(
            accounts
                .iter()
                .map(|a| (a.name.as_str(), a.mask.as_deref(), a.count, a.sum.as_str()))
                .collect::<Vec<_>>(),
            [
                // The two coffees of one day stay two rows.
                ("Account …2051", Some("2051"), 4, "2410.40"),
                ("Account …5030", Some("5030"), 2, "201.25"),
            ]
        );
        // Again: nothing new, in either account.
        let again = import(db, user, AUFTRAGSKONTO);
        assert_eq!((again.added, again.updated, again.unchanged), (0, 0, 6));
        assert_eq!(stored(db, user), accounts);
        // A chosen account does not take rows whose file names their
        // account, and the import says so.
        import(db, user, BANK_A);
        let bank_a = stored(db, user)[2].id;
        let chosen = import_into(db, user, AUFTRAGSKONTO, &ImportTarget::Account(bank_a)).unwrap();
        assert_eq!(chosen.added, 0);
        assert_eq!(
            chosen.notes,
            [
                "the file names the account of each of its statements, so none went into \"Imported EUR account (CSV: Date, Description, Amount)\""
            ]
        );
        assert_eq!(stored(db, user)[..2], accounts[..]);
    });
}

#[test]
fn files_naming_no_account_stay_apart_by_layout_format_and_currency() {
    // Statement files of other formats that name no account.
    let ofx = "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR\
               <BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260302<TRNAMT>-10.00<FITID>F1<NAME>Kiosk\
               </STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n";
    let camt = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
        <Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\"><BkToCstmrStmt>\
        <GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-03-05T10:00:00</CreDtTm></GrpHdr>\
        <Stmt><Id>S1</Id><CreDtTm>2026-03-05T10:00:00</CreDtTm>\
        <Ntry><Amt Ccy=\"EUR\">12.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>\
        <BookgDt><Dt>2026-03-02</Dt></BookgDt><AddtlNtryInf>Kiosk</AddtlNtryInf></Ntry>\
        </Stmt></BkToCstmrStmt></Document>";
    on_every_backend(|db| {
        let user = user(db, "apart@example.com");
        for file in [BANK_A, BANK_B, CARD_USD, ofx, camt] {
            let summary = import(db, user, file);
            assert_eq!(summary.accounts, 1, "{file}");
        }
        assert_eq!(
            figures(db, user),
            owned(&[
                (
                    "Imported EUR account (CSV: Date, Description, Amount)",
                    "EUR",
                    3,
                    "1557.90"
                ),
                (
                    "Imported EUR account (CSV: Buchungstag, Verwendungszweck, Betrag, …)",
                    "EUR",
                    2,
                    "1050.00"
                ),
                (
                    "Imported EUR account (CSV: Transaction Date, Description, Amount)",
                    "EUR",
                    3,
                    "71.51"
                ),
                (
                    "Imported EUR account (an OFX file naming no account)",
                    "EUR",
                    1,
                    "-10.00"
                ),
                (
                    "Imported EUR account (a camt file naming no account)",
                    "EUR",
                    1,
                    "-12.00"
                ),
            ])
        );
        // The card export states no currency: taken as EUR, and said.
        let card = import(db, user, CARD_USD);
        assert_eq!(card.added, 0);
        assert!(
            card.notes.len() == 1 && card.notes[0].starts_with("3 row(s) name no currency"),
            "{:?}",
            card.notes
        );
        // The same layout in another currency is another account.
        let usd = import(db, user, STATES_USD);
        assert_eq!(usd.notes, Vec::<String>::new());
        let accounts = figures(db, user);
        assert_eq!(accounts.len(), 6);
        assert_eq!(
            accounts[5],
            owned(&[(
                "Imported USD account (CSV: Date, Description, Amount, …)",
                "USD",
                1,
                "-180.00"
            )])[0]
        );
    });
}

#[test]
fn a_file_naming_no_account_goes_where_the_user_says() {
    on_every_backend(|db| {
        let user = user(db, "target@example.com");
        // A new account: the card's rows take its currency, with no note.
        let target = ImportTarget::new_account(" Visa card ", "usd").unwrap();
        assert_eq!(
            target,
            ImportTarget::NewAccount {
                name: "Visa card".into(),
                currency: "USD".into()
            }
        );
        let first = import_into(db, user, CARD_USD, &target).unwrap();
        assert_eq!((first.accounts, first.added), (1, 3));
        assert_eq!(first.notes, Vec::<String>::new());
        let card = stored(db, user).remove(0);
        assert_eq!(first.target_account, Some(card.id));
        assert_eq!(
            (
                card.name.as_str(),
                card.currency.as_str(),
                card.mask,
                card.count,
                card.sum.as_str(),
                card.currencies.clone()
            ),
            ("Visa card", "USD", None, 3, "71.51", vec!["USD".to_owned()])
        );
        // The next month into it: one row overlaps, one is new.
        let into = ImportTarget::Account(card.id);
        let later = import_into(db, user, CARD_USD_LATER, &into).unwrap();
        assert_eq!(
            (later.added, later.unchanged, later.target_account),
            (1, 1, Some(card.id))
        );
        // The same layout stating USD fits it too; importing again
        // changes nothing.
        assert_eq!(import_into(db, user, STATES_USD, &into).unwrap().added, 1);
        assert_eq!(import_into(db, user, CARD_USD, &into).unwrap().added, 0);
        assert_eq!(
            figures(db, user),
            owned(&[("Visa card", "USD", 5, "-111.39")])
        );
        // A name taken, or a file stating another currency: refused,
        // naming the field and both currencies; nothing is stored.
        let err = import_into(db, user, CARD_USD, &target).unwrap_err();
        assert!(
            matches!(&err, StoreError::Target(e @ TargetError::NameTaken { .. }) if e.field() == TargetField::NewAccountName),
            "{err:?}"
        );
        let err = import_into(db, user, BANK_B, &into).unwrap_err();
        let StoreError::Target(why) = err else {
            panic!("{err:?}")
        };
        assert_eq!(why.field(), TargetField::Account);
        assert_eq!(
            why.to_string(),
            "the file's amounts are in EUR, but \"Visa card\" is in USD: nothing was imported; choose an account in EUR, or a new one"
        );
        let err = import_into(
            db,
            user,
            STATES_USD,
            &ImportTarget::new_account("Euro card", "EUR").unwrap(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, StoreError::Target(e @ TargetError::CurrencyMismatch { .. }) if e.field() == TargetField::NewAccountCurrency
                && e.to_string().starts_with("the file's amounts are in USD, but the new account \"Euro card\" is in EUR")),
            "{err:?}"
        );
        assert_eq!(stored(db, user).len(), 1);
        // Another user's account, or one that does not exist: the same
        // refusal. So is a new account's bad name or currency.
        let other = self::user(db, "other@example.com");
        import(db, other, BANK_A);
        let theirs = stored(db, other)[0].id;
        for id in [theirs, AccountId::new(999_999)] {
            let err = import_into(db, user, BANK_A, &ImportTarget::Account(id)).unwrap_err();
            assert!(
                matches!(&err, StoreError::Target(TargetError::NotImported(i)) if *i == id),
                "{err:?}"
            );
            assert!(matches!(
                import::check_target(&mut db.conn().unwrap(), user, &ImportTarget::Account(id)),
                Err(StoreError::Target(_))
            ));
        }
        assert_eq!(
            ImportTarget::new_account("Card", "US").unwrap_err().field(),
            TargetField::NewAccountCurrency
        );
        assert_eq!(
            ImportTarget::new_account("Ca\u{202e}rd", "USD")
                .unwrap_err()
                .field(),
            TargetField::NewAccountName
        );
        assert_eq!(stored(db, user).len(), 1);
        assert_eq!(stored(db, other).len(), 1);
    });
}

#[test]
fn any_format_naming_no_account_can_go_into_a_chosen_account() {
    // An MT940 snippet without :25: and without a currency (`XXX`).
    let mt940 = ":20:S1\r\n:61:2603020302D5,00NTRFNONREF\r\n:86:Kiosk\r\n-\r\n";
    on_every_backend(|db| {
        let user = user(db, "formats@example.com");
        let statements = import::parse(mt940.as_bytes(), Some(Format::Mt940)).unwrap();
        assert_eq!(statements[0].currency, "XXX");
        let summary = import::store_into(
            &mut db.conn().unwrap(),
            user,
            statements,
            &ImportTarget::new_account("Cash book", "CHF").unwrap(),
            now(),
        )
        .unwrap();
        assert_eq!(summary.added, 1);
        let account = stored(db, user).remove(0);
        assert_eq!(
            (
                account.name.as_str(),
                account.currency.as_str(),
                account.sum.as_str(),
                account.currencies
            ),
            ("Cash book", "CHF", "-5.00", vec!["CHF".to_owned()])
        );
    });
}

#[test]
fn a_file_imported_before_files_were_kept_apart_is_found_again() {
    on_every_backend(|db| {
        let user = user(db, "legacy@example.com");
        // What earlier versions stored: every CSV naming no account of a
        // currency in one account, its rows' ids made with that key.
        let mut before = import::parse(BANK_A.as_bytes(), None).unwrap();
        before.extend(import::parse(BANK_B.as_bytes(), None).unwrap());
        for statement in &mut before {
            statement.account_id = "unidentified-EUR".into();
            statement.account_name = Some("Imported EUR account (CSV)".into());
        }
        import::store(&mut db.conn().unwrap(), user, before, now()).unwrap();
        let merged = owned(&[("Imported EUR account (CSV)", "EUR", 5, "2607.90")]);
        assert_eq!(figures(db, user), merged);

        // Importing either file again changes nothing, and says where its
        // rows are.
        for file in [BANK_A, BANK_B] {
            let again = import(db, user, file);
            assert_eq!((again.added, again.updated), (0, 0), "{file}");
            assert!(
                again.notes.contains(
                    &"the rows went into \"Imported EUR account (CSV)\", which holds rows of this file from an earlier import".to_owned()
                ),
                "{:?}",
                again.notes
            );
        }
        assert_eq!(figures(db, user), merged);
        // A later export of the same bank overlapping the old one goes on
        // in the old account; one that does not overlap starts the
        // layout's own account.
        let overlapping =
            "Date,Description,Amount\n2026-03-04,Rent,-900.00\n2026-04-02,Groceries,-38.00\n";
        assert_eq!(import(db, user, overlapping).added, 1);
        let fresh = "Date,Description,Amount\n2026-05-02,Groceries,-12.00\n";
        assert_eq!(import(db, user, fresh).added, 1);
        assert_eq!(
            figures(db, user),
            owned(&[
                ("Imported EUR account (CSV)", "EUR", 6, "2569.90"),
                (
                    "Imported EUR account (CSV: Date, Description, Amount)",
                    "EUR",
                    1,
                    "-12.00"
                ),
            ])
        );
        // Importing the old ones again still changes nothing, now that the
        // layout has its own account; rows it holds stay there.
        for file in [BANK_A, overlapping, fresh] {
            assert_eq!(import(db, user, file).added, 0, "{file}");
        }
        assert_eq!(figures(db, user).len(), 2);
    });
}

/// What earlier versions stored for `file`: every row in one account of
/// the first row's currency, by the id it had then.
fn stored_as_before(db: &Database, user: UserId, file: &str) {
    let statements = import::parse(file.as_bytes(), None).unwrap();
    let mut merged = statements[0].clone();
    merged.account_id = "unidentified-EUR".into();
    merged.account_name = Some("Imported EUR account (CSV)".into());
    merged.transactions.clear();
    for statement in statements {
        let mut transactions = statement.transactions;
        if !statement.legacy_ids.is_empty() {
            for (t, id) in transactions.iter_mut().zip(statement.legacy_ids) {
                t.provider_id = id;
            }
        }
        merged.transactions.extend(transactions);
    }
    merged.legacy_ids.clear();
    import::store(&mut db.conn().unwrap(), user, vec![merged], now()).unwrap();
}

#[test]
fn rows_stored_before_stay_where_they_are_whatever_account_their_file_now_names() {
    on_every_backend(|db| {
        let user = user(db, "stayed@example.com");
        // An Auftragskonto export imported before account columns routed
        // rows: all six rows (twin bakery payments kept) in one account.
        stored_as_before(db, user, AUFTRAGSKONTO);
        let before = figures(db, user);
        assert_eq!(
            before,
            owned(&[("Imported EUR account (CSV)", "EUR", 6, "2611.65")])
        );
        // Imported again, its rows now name two IBANs, but every one is
        // stored already: nothing is added, and the note says where they
        // are.
        let again = import(db, user, AUFTRAGSKONTO);
        assert_eq!((again.added, again.updated), (0, 0), "{:?}", again.notes);
        assert!(
            again.notes.iter().any(|n| n.contains(
                "were stored in \"Imported EUR account (CSV)\" by an import before files were kept apart by account and layout: they stay there"
            )),
            "{:?}",
            again.notes
        );
        assert_eq!(figures(db, user), before);

        // March stored the old way, May in the layout's own account; a
        // March-to-May export adds April alone.
        let user = self::user(db, "overlap@example.com");
        stored_as_before(
            db,
            user,
            "Date,Description,Amount\n2026-03-02,Groceries,-42.10\n2026-03-03,Salary,2500.00\n",
        );
        assert_eq!(
            import(
                db,
                user,
                "Date,Description,Amount\n2026-05-02,Groceries,-12.00\n"
            )
            .added,
            1
        );
        let march_to_may = "Date,Description,Amount\n2026-03-02,Groceries,-42.10\n2026-03-03,Salary,2500.00\n2026-04-02,Groceries,-38.00\n2026-05-02,Groceries,-12.00\n";
        let summary = import(db, user, march_to_may);
        assert_eq!(
            (summary.added, summary.unchanged),
            (1, 1),
            "{:?}",
            summary.notes
        );
        assert_eq!(
            figures(db, user),
            owned(&[
                ("Imported EUR account (CSV)", "EUR", 2, "2457.90"),
                (
                    "Imported EUR account (CSV: Date, Description, Amount)",
                    "EUR",
                    2,
                    "-50.00"
                ),
            ])
        );
    });
}
