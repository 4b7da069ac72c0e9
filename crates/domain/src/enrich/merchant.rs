//! The clean merchant: the name a person would write for who was paid or
//! who paid, from the provider's counterparty where it gives one, else from
//! the bank's raw text (docs/enrichment.md, "merchant").
//!
//! Bank texts wrap the name in what the payment went through: a card
//! processor or wallet (`SQ *`, `PAYPAL *`), the kind of payment (`CARD`,
//! `SEPA-Basislastschrift`, `BEA`), card and terminal numbers, IBANs,
//! references, dates and times, and the place. The name is what is left
//! between the wrapping in front and the first of the rest.

use super::merchants::Merchant;
use super::{Anywhere, fold, known_merchant};

/// A clean merchant, and the entry of the merchant table it is.
#[derive(Debug, Clone)]
pub struct Payee {
    pub name: String,
    pub known: Option<&'static Merchant>,
}

/// The longest name made, in characters (a name is cut at a word).
const MAX_NAME_CHARS: usize = 40;

/// At most this many words make a name: a card descriptor's name field
/// holds a few, and the rest of a long text is not one.
const MAX_NAME_WORDS: usize = 6;

/// The clean merchant of a record: from the provider's name where it
/// cleans to something, else from the description; a label of the text
/// when neither cleans to a name. `None` only for a record with no text.
pub fn clean(provider: Option<&str>, description: Option<&str>) -> Option<Payee> {
    let provider = provider.filter(|p| !p.trim().is_empty());
    let description = description.filter(|d| !d.trim().is_empty());
    let name = provider
        .and_then(name_in_segments)
        .or_else(|| description.and_then(name_in_segments));
    let Some(name) = name else {
        return provider
            .or(description)
            .and_then(label)
            .map(|name| Payee { name, known: None });
    };
    let known = known_merchant(&name, Anywhere::No);
    // Paid through a payment service (`PayPal … SPOTIFY, Ihr Einkauf bei
    // SPOTIFY`): the merchant the text names is who was paid.
    let known = match known {
        Some(service) if service.subcategory.is_none() => [provider, description]
            .into_iter()
            .flatten()
            .find_map(|text| known_merchant(text, Anywhere::Yes))
            .or(Some(service)),
        other => other,
    };
    match known {
        Some(known) => Some(Payee {
            name: known.name.to_owned(),
            known: Some(known),
        }),
        None => Some(Payee {
            name: people_case(&name),
            known: None,
        }),
    }
}

/// The name in the first segment of a text that holds one: `;` parts
/// fields (`PREAUTHORIZED DEBIT;B.C. HYDRO;…`), and so does an MT940
/// subfield mark left in a text (`?32`).
fn name_in_segments(text: &str) -> Option<String> {
    if let Some(name) = mt940_name(text) {
        return Some(name);
    }
    let mut segments = text.split(';').flat_map(|s| s.split('?'));
    segments.find_map(|segment| {
        let segment = segment.trim_start_matches(|c: char| c.is_ascii_digit());
        name_in(segment)
    })
}

/// The name of an MT940 `:86:` field left in a text: its `?32` subfield,
/// continued in `?33` (each holds 27 characters, so a name may be cut in
/// the middle of a word).
fn mt940_name(text: &str) -> Option<String> {
    let field = |tag: &str| {
        let start = text.find(tag)? + tag.len();
        let rest = &text[start..];
        let end = rest.find('?').unwrap_or(rest.len());
        Some(&rest[..end])
    };
    let first = field("?32")?;
    let name = match field("?33") {
        Some(second) if first.chars().count() >= 27 => format!("{first}{second}"),
        Some(second) => format!("{first} {second}"),
        None => first.to_owned(),
    };
    words_of(&name)
}

/// The name a text holds, as written in it; `None` when it holds only
/// wrapping.
fn name_in(text: &str) -> Option<String> {
    // Knab's unstructured remittance: `USTD//text/`.
    let text = match text.trim_start().strip_prefix("USTD//") {
        Some(rest) => rest.trim_end().trim_end_matches('/'),
        None => text,
    };
    // A labelled value is the name itself: none of its words is wrapping
    // (`/NAME/VAN DER BERG …`).
    if let Some(name) = labelled_name(text) {
        return words_of(name);
    }
    // `NL08ABNA… international card services …`: Dutch exports put the
    // other party's account and name first, and the name may start with
    // what elsewhere is a type word (`transfer solutions bv`).
    let text = match after_iban(text) {
        Some(rest) => rest,
        None => without_wrapper(skip_leading(text)),
    };
    words_of(text)
}

/// The name at the start of a text, up to what ends it.
fn words_of(text: &str) -> Option<String> {
    // A US card descriptor's fixed-width fields (name, city, state) are
    // padded with spaces: a run of them, then a place, ends the name.
    let text = text.trim_start();
    let text = match text.find("  ") {
        Some(end) if ends_in_us_state(&text[end..]) => &text[..end],
        _ => text,
    };
    let mut words: Vec<&str> = Vec::new();
    let mut tokens = text.split_whitespace().peekable();
    while let Some(token) = tokens.next() {
        // `AMAZON.COM*AB12CD34E`: the name, a star, a reference; but
        // `APL*ITUNES.COM`, `PAG*NAME`: a processor's short mark, a star,
        // the name.
        let (token, mut cut) = match token.split_once('*') {
            Some((mark, name)) if mark.chars().count() <= 4 && !name.is_empty() => (name, false),
            Some((name, _)) => (name, true),
            None => (token, false),
        };
        // `REWE Markt GmbH//Berlin/DE`: German card payments put the place
        // after two slashes.
        let token = match token.split_once("//") {
            Some((name, _)) => {
                cut = true;
                name
            }
            None => token,
        };
        let comma = token.ends_with(',');
        let token = token.trim_end_matches([',', ';']);
        if ends_name(token) || (!words.is_empty() && is_stop_word(token)) {
            break;
        }
        // A European legal form ends a company's name; what follows is
        // remittance (`Vodafone GmbH Kundennummer …`). US forms are only
        // left out at the end (`ECOMMERCE INDUSTRIES INC EUROPE`).
        if !words.is_empty() && is_european_legal_form(token) {
            break;
        }
        // Capitals, then a word in lower case: the name in capitals as
        // the bank's system writes it, then the remittance as the payer
        // wrote it (`HANS WEBER Geburtstagsgeschenk`).
        if is_capitals_name(&words) && is_mixed_case(token) {
            break;
        }
        if !token.is_empty() {
            words.push(token);
        }
        // `COMPRA EN EL CORTE INGLES, CON LA TARJETA …`: a comma, then
        // wrapping, ends the name.
        if comma && tokens.peek().is_some_and(|next| is_type_word(next)) {
            break;
        }
        if cut || words.len() == MAX_NAME_WORDS {
            break;
        }
    }
    while let Some(last) = words.last() {
        // Wrapping after a name (`… WEB PMTS`, `CHASE CARD ENDING`) goes
        // too.
        const TRAILING: &[&str] = &[
            "web", "online", "direct", "card", "carte", "karte", "tarjeta", "cartao",
        ];
        let trailing_type = words.len() > 1 && TRAILING.contains(&fold(&[Some(last)]).trim());
        if is_legal_form(last) || !last.chars().any(char::is_alphanumeric) || trailing_type {
            words.pop();
        } else {
            break;
        }
    }
    // `SALUMERIA BIANCHI MILANO`: the place a terminal writes (in
    // capitals, as it writes the name) is not the name; a name someone
    // typed in mixed case keeps its place (`SumUp *Bäckerei Schmidt
    // Berlin`).
    if !words.iter().any(|w| w.chars().any(char::is_lowercase)) {
        // `CASA PEPE-MADRID`: a terminal that joins the place with a
        // hyphen.
        if let Some(last) = words.last_mut()
            && let Some((name, place)) = last.rsplit_once('-')
            && !name.is_empty()
            && super::places::is_city(place)
        {
            *last = name;
        }
        let place = super::places::trailing_place(&words);
        words.truncate(words.len() - place);
    }
    // A name is more than type words and short fragments.
    if words.iter().all(|w| is_type_word(w)) {
        return None;
    }
    let name = words.join(" ");
    (name.chars().any(char::is_alphabetic)).then(|| cut_to_length(&name))
}

/// The value of a `/NAME/` subfield (SEPA remittance structures in MT940
/// `:86:`), or of a `Naam:`/`Name:` label (Dutch and other banks' narrative
/// exports), up to the next tag or label.
fn labelled_name(text: &str) -> Option<&str> {
    // `/CNTP/account/BIC/name/`: the counterparty's three fields.
    if let Some(start) = text.find("/CNTP/") {
        let name = text[start + 6..].split('/').nth(2).unwrap_or_default();
        if !name.trim().is_empty() {
            return Some(name);
        }
    }
    if let Some(start) = text.find("/NAME/") {
        let rest = &text[start + 6..];
        let end = next_tag(rest).unwrap_or(rest.len());
        return Some(&rest[..end]).filter(|v| !v.trim().is_empty());
    }
    // French transfers: `VIR SEPA RECU /DE name /MOTIF …`, `… /BEN name
    // /REFDO …`.
    for label in [" /DE ", " /BEN "] {
        if let Some(start) = text.find(label) {
            let rest = &text[start + label.len()..];
            let end = rest.find(" /").unwrap_or(rest.len());
            return Some(&rest[..end]).filter(|v| !v.trim().is_empty());
        }
    }
    const LABELS: &[&str] = &[
        "naam:",
        "name:",
        "nom:",
        "nome:",
        "nombre:",
        "auftraggeber:",
        "empfaenger:",
        "empfanger:",
        "beguenstigter:",
    ];
    let lower = text.to_ascii_lowercase();
    let start = LABELS.iter().find_map(|label| {
        lower
            .match_indices(label)
            .find(|(at, _)| *at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b'/'))
            .map(|(at, _)| at + label.len())
    })?;
    let rest = &text[start..];
    // Up to the next `Label:` word.
    let mut end = rest.len();
    let mut offset = 0;
    for token in rest.split_inclusive(char::is_whitespace) {
        let word = token.trim();
        if offset > 0 && word.len() > 2 && word.ends_with(':') {
            end = offset;
            break;
        }
        offset += token.len();
    }
    Some(&rest[..end]).filter(|v| !v.trim().is_empty())
}

/// The text after an IBAN it starts with.
fn after_iban(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let end = text.find(char::is_whitespace)?;
    if !is_iban(&text[..end]) {
        return None;
    }
    let rest = text[end..].trim_start();
    // The BIC that often follows the IBAN.
    let bic_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some(match is_bic(&rest[..bic_end]) {
        true => rest[bic_end..].trim_start(),
        false => rest,
    })
}

/// A BIC's shape (ISO 9362): four letters of the bank, two of the
/// country, two of the place, and maybe three of the branch.
fn is_bic(token: &str) -> bool {
    let b = token.as_bytes();
    matches!(b.len(), 8 | 11)
        && b[..6].iter().all(u8::is_ascii_uppercase)
        && b[6..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Where the next `/TAG/` of a SEPA structure starts in `rest`.
fn next_tag(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    (0..bytes.len()).find(|&i| {
        bytes[i] == b'/' && {
            let tag: Vec<u8> = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_uppercase())
                .copied()
                .collect();
            (2..=4).contains(&tag.len()) && bytes.get(i + 1 + tag.len()) == Some(&b'/')
        }
    })
}

/// The text after its leading type words, numbers, dates and IBANs.
fn skip_leading(text: &str) -> &str {
    let mut rest = text.trim_start();
    let mut after_wrapping = false;
    let mut after_type_word = false;
    loop {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        if token.is_empty() {
            return rest;
        }
        let skip = is_type_word(token)
            || is_numberish(token)
            || is_iban(token)
            // A label, or a label and its value (`NR:XXXX`, `Term:12`).
            || (token.contains(':') && !rest[end..].trim().is_empty())
            || !token.chars().any(char::is_alphanumeric)
            // A country in brackets (`A (ITA) ESSELUNGA`).
            || (token.starts_with('(') && token.ends_with(')'))
            // `TRANSFERENCIA A FAVOR DE name`, `PIX ENVIADO - name`,
            // `TRF P/ name`: the small words that join wrapping to the
            // name, only after wrapping.
            || (after_wrapping && is_connector(token))
            // `DEB MC`: Mastercard after a type word; `MC DONALDS` a name.
            || (after_type_word && fold(&[Some(token)]).trim() == "mc");
        // `SQ *NAME`, `PAYPAL *NAME`: a wrapper, not a word to skip.
        if !skip || wrapper_len(rest).is_some() {
            return rest;
        }
        after_wrapping = true;
        after_type_word = is_type_word(token);
        rest = rest[end..].trim_start();
    }
}

/// Prepositions that join the words saying how money moved to the name
/// (`a`, `de`, `da`, `di`, `du`, `an`, `en`, `no`, `on`, `p/`, …).
fn is_connector(token: &str) -> bool {
    const CONNECTORS: &[&str] = &[
        "a", "de", "da", "di", "du", "do", "del", "al", "ao", "an", "en", "no", "on", "p",
    ];
    let folded = fold(&[Some(token)]);
    let mut words = folded.split_whitespace();
    words.next().is_some_and(|w| CONNECTORS.contains(&w)) && words.next().is_none()
}

/// Whether the words so far are a name written in capitals: two words or
/// more, one of them a word (four letters or more), not only initials
/// (`ARD ZDF`).
fn is_capitals_name(words: &[&str]) -> bool {
    words.len() >= 2
        && words.iter().all(|w| !w.chars().any(char::is_lowercase))
        && words
            .iter()
            .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 4)
}

/// A word with capitals and lower case letters (`Geburtstagsgeschenk`,
/// `Berlin`).
fn is_mixed_case(token: &str) -> bool {
    token.chars().any(char::is_uppercase) && token.chars().any(char::is_lowercase)
}

/// Card processors and wallets that write their name before the
/// merchant's, as they write it (compared without case).
const WRAPPERS: &[&str] = &[
    "sq *",
    "sq*",
    "sqr*",
    "paypal *",
    "paypal*",
    "pp*",
    "pp *",
    "sumup *",
    "sumup*",
    "sum up *",
    "zettle_*",
    "zettle *",
    "izettle *",
    "iz *",
    "iz*",
    "crv*",
    "google *",
    "google*",
    "tst*",
    "tst *",
    "sp *",
    "py *",
    "wpy*",
    "lsp*",
    "ccv*",
    "ccv *",
    "apple pay ",
    "google pay ",
];

/// The length of the wrapper `text` starts with.
fn wrapper_len(text: &str) -> Option<usize> {
    let head = text.get(..12).unwrap_or(text).to_ascii_lowercase();
    WRAPPERS
        .iter()
        .find(|w| head.starts_with(*w))
        .map(|w| w.len())
}

fn without_wrapper(text: &str) -> &str {
    match wrapper_len(text) {
        Some(len) => text[len..].trim_start(),
        None => text,
    }
}

/// Words that say how money moved, not who was paid, in the languages of
/// the banks Tributary reads (folded: lower case, no accents).
const TYPE_WORDS: &[&str] = &[
    "card",
    "pos",
    "visa",
    "mastercard",
    "maestro",
    "debit",
    "credit",
    "purchase",
    "payment",
    "contactless",
    "nfc",
    "recurring",
    "direct",
    "dd",
    "so",
    "bgc",
    "fpi",
    "fpo",
    "ach",
    "transfer",
    "to",
    "from",
    "ref",
    "kartenzahlung",
    "girocard",
    "ec",
    "sepa",
    "lastschrift",
    "basislastschrift",
    "firmenlastschrift",
    "uberweisung",
    "gutschrift",
    "dauerauftrag",
    "einzug",
    "online",
    "bea",
    "gea",
    "betaalautomaat",
    "betaling",
    "aan",
    "van",
    "overboeking",
    "incasso",
    "ideal",
    "periodieke",
    "paiement",
    "par",
    "carte",
    "cb",
    "prlv",
    "prelevement",
    "vir",
    "virement",
    "compra",
    "pago",
    "tarjeta",
    "con",
    "pagamento",
    "bonifico",
    "addebito",
    "transferencia",
    "trf",
    "wallet",
    "nr",
    "interne",
    "buymf",
    "buystock",
    "sellmf",
    "sellstock",
    "buyopt",
    "sellopt",
    "buydebt",
    "selldebt",
    "buyother",
    "sellother",
    "reinvest",
    "ueberweisung",
    "preauthorized",
    "pour",
    "giro",
    "pasnr",
    "betalingskenm",
    "naar",
    "europese",
    "doorlopend",
    // US card and ACH entries.
    "checkcard",
    "authorized",
    "zelle",
    "web",
    "pmt",
    // German.
    "elv",
    "folgelastschrift",
    "belastung",
    "lohn",
    "gehalt",
    // Dutch.
    "betaalpas",
    // French.
    "recu",
    "emis",
    "permanent",
    "inst",
    "facture",
    // Spanish.
    "tarj",
    "recibo",
    "adeudo",
    "bizum",
    "enviado",
    "recibido",
    // Italian.
    "tramite",
    "sdd",
    "diretto",
    "accredito",
    "stipendio",
    "istantaneo",
    "favore",
    "favor",
    "vostro",
    "fattura",
    "carico",
    "per",
    "eur",
    "delega",
    "impuestos",
    "darf",
    "iptu",
    "salario",
    // Portuguese and Brazilian.
    "pix",
    "ted",
    "enviada",
    "recebido",
    "recebida",
    "cartao",
    "debito",
    "deb",
    "c",
    "pagto",
    "pag",
    "boleto",
    "compras",
    "elec",
    "directo",
    "cobranca",
    "credito",
    "ordenado",
    "mb",
    "way",
];

/// Type words that, after a name, end it (`… paulissen Betaling
/// sieraden`); the others (`card`, `transfer`) can be part of one
/// (`International Card Services`).
const STOP_WORDS: &[&str] = &[
    "betaling",
    "overboeking",
    "interne",
    "incasso",
    "lastschrift",
    "basislastschrift",
    "uberweisung",
    "ueberweisung",
    "gutschrift",
    "dauerauftrag",
    "kartenzahlung",
    "paiement",
    "prelevement",
    "virement",
    "pagamento",
    "bonifico",
    "compra",
    "sepa",
    "fil",
    // US ACH entry descriptions and references.
    "payroll",
    "ppd",
    "dep",
    "pmt",
    "pmts",
    "autopay",
    "epayment",
    "cashout",
    "conf",
    "ending",
    "ref",
    // Card and remittance words of the other languages.
    "carta",
    "causale",
    "concepto",
    "nº",
    "paie",
    "salaire",
    "salario",
    "vencimento",
    "lohn",
    "gehalt",
    "miete",
    "huur",
    "loyer",
    "alquiler",
    "affitto",
    "renda",
    "aluguel",
];

fn is_stop_word(token: &str) -> bool {
    let folded = fold(&[Some(token)]);
    // `E-PAYMENT` is `epayment`.
    let joined: String = folded.split_whitespace().collect();
    STOP_WORDS.contains(&joined.as_str())
        || folded
            .split_whitespace()
            .next()
            .is_some_and(|w| STOP_WORDS.contains(&w))
}

fn is_type_word(token: &str) -> bool {
    let folded = fold(&[Some(token)]);
    let mut words = folded.split_whitespace().peekable();
    words.peek().is_some() && words.all(|w| TYPE_WORDS.contains(&w))
}

/// Whether a word ends the name: a number, date or time, an IBAN, a
/// reference's label, a SEPA field tag.
fn ends_name(token: &str) -> bool {
    const TAGS: &[&str] = &[
        "EREF+", "MREF+", "CRED+", "SVWZ+", "KREF+", "ABWA+", "ABWE+", "IBAN+",
    ];
    is_numberish(token)
        || is_iban(token)
        // A label, or a label and its value (`ID:`, `DES:PAYROLL`).
        || (token.len() > 1 && token.contains(':'))
        || TAGS.iter().any(|t| token.starts_with(t))
        || token.starts_with('/')
}

/// A number, date, time or code: three digits or more, or more digits
/// than letters (`12/03`, `21:27`, `1234,PAS123`; not `O2`, `7-Eleven`).
fn is_numberish(token: &str) -> bool {
    // `1&1` is a name.
    if token.contains('&') {
        return false;
    }
    let digits = token.chars().filter(char::is_ascii_digit).count();
    let letters = token.chars().filter(|c| c.is_alphabetic()).count();
    digits >= 3 || (digits >= 1 && digits >= letters)
}

/// An IBAN's shape (ISO 13616): a country's letters, two check digits,
/// then 11 to 30 letters and digits.
fn is_iban(token: &str) -> bool {
    let token = token.trim_matches(|c: char| !c.is_alphanumeric());
    let b = token.as_bytes();
    (15..=34).contains(&b.len())
        && b[..2].iter().all(u8::is_ascii_uppercase)
        && b[2..4].iter().all(u8::is_ascii_digit)
        && b[4..].iter().all(u8::is_ascii_alphanumeric)
}

/// A company's legal form, which people leave out when they name it.
fn is_legal_form(word: &str) -> bool {
    const FORMS: &[&str] = &[
        "bv", "nv", "gmbh", "ag", "kg", "ltd", "limited", "inc", "llc", "plc", "sa", "sas", "sarl",
        "sl", "srl", "spa", "lda", "co", "corp", "ev", "ug", "se", "oy", "ab", "vof", "sau", "slu",
        "ltda", "ohg", "mbh", "cia", "sgps",
    ];
    let folded: String = word
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    FORMS.contains(&folded.as_str()) || word == "&"
}

/// A legal form of the European countries whose bank texts put the
/// remittance after the other party's company name.
fn is_european_legal_form(word: &str) -> bool {
    const US: &[&str] = &["inc", "llc", "ltd", "limited", "corp", "co", "plc"];
    let folded: String = word
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    word != "&" && is_legal_form(word) && !US.contains(&folded.as_str())
}

/// Whether a text's last word is a US state's or territory's code
/// (`… OAKLAND      CA`).
fn ends_in_us_state(text: &str) -> bool {
    text.split_whitespace()
        .last()
        .is_some_and(|last| super::places::US_STATES.contains(&last))
}

fn cut_to_length(name: &str) -> String {
    let mut out = String::new();
    for word in name.split_whitespace() {
        let separator = usize::from(!out.is_empty());
        if out.chars().count() + separator + word.chars().count() > MAX_NAME_CHARS {
            if out.is_empty() {
                out = word.chars().take(MAX_NAME_CHARS).collect();
            }
            break;
        }
        if separator == 1 {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A short label of a text that holds no name (only wrapping, like
/// `SEPA-Basislastschrift`): its first words, so that a record with text
/// never has a null merchant (clients read it as the payee).
pub fn label(text: &str) -> Option<String> {
    let label = cut_to_length(text);
    (!label.is_empty()).then_some(label)
}

/// A name as people write it: one written in capitals only (or lower case
/// only), as bank systems do, is given capitals at the start of its words;
/// short words without a vowel stay capitals (`KPN`, `BP`); a name already
/// in mixed case is kept.
fn people_case(name: &str) -> String {
    let has_upper = name.chars().any(char::is_uppercase);
    let has_lower = name.chars().any(char::is_lowercase);
    if has_upper && has_lower {
        return name.to_owned();
    }
    const SMALL: &[&str] = &[
        "de", "van", "der", "den", "het", "und", "and", "of", "la", "le", "du", "des", "di", "da",
        "do", "dos", "y", "et", "am", "im",
    ];
    name.split(' ')
        .enumerate()
        .map(|(i, word)| {
            let lower = word.to_lowercase();
            let letters: Vec<char> = lower.chars().filter(|c| c.is_alphabetic()).collect();
            let vowel = letters
                .iter()
                .any(|c| "aeiouyàáâäèéêëìíîïòóôöùúûü".contains(*c));
            if i > 0 && SMALL.contains(&lower.as_str()) {
                lower
            } else if !letters.is_empty() && letters.len() <= 3 && !vowel && !word.ends_with('.') {
                word.to_uppercase()
            } else if word.contains('&') && letters.len() <= 4 {
                // Initials joined by `&` (`PG&E`, `AT&T`).
                word.to_uppercase()
            } else if lower.contains('.') && !lower.ends_with('.') {
                // A web address (`bol.com`) keeps its own case.
                lower
            } else {
                capitalize_parts(&lower)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Capital first letters of each part of a word (`mc-donalds` is
/// `Mc-Donalds`, `o'neill` is `O'Neill`); after an apostrophe only where
/// one letter comes before it (`joe's` is `Joe's`).
fn capitalize_parts(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut start = true;
    let mut letters_in_part = 0;
    for c in word.chars() {
        if start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
            start = false;
            letters_in_part = 1;
        } else {
            out.push(c);
            if c.is_alphabetic() {
                letters_in_part += 1;
            }
            if matches!(c, '-' | '/' | '(' | '.') || (c == '\'' && letters_in_part == 1) {
                start = true;
            }
        }
    }
    out
}
