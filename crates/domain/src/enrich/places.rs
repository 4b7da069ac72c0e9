//! Places card terminals write after the merchant's name (`PAGAMENTO POS
//! BAR SPORT ROMA`, `SQ *CORNER BREW CHICAGO IL`): the larger cities of
//! the countries whose banks Tributary reads, and US state codes. A place
//! not listed stays part of the name.

/// Cities, folded (lower case, no accents, punctuation as a space).
const CITIES: &[&str] = &[
    // United States
    "new york",
    "brooklyn",
    "los angeles",
    "san francisco",
    "oakland",
    "san jose",
    "san diego",
    "chicago",
    "houston",
    "austin",
    "dallas",
    "seattle",
    "portland",
    "denver",
    "boston",
    "atlanta",
    "miami",
    "philadelphia",
    "phoenix",
    "las vegas",
    "minneapolis",
    "detroit",
    "washington",
    "nashville",
    "orlando",
    // Germany
    "berlin",
    "hamburg",
    "munchen",
    "muenchen",
    "koln",
    "koeln",
    "frankfurt",
    "stuttgart",
    "dusseldorf",
    "duesseldorf",
    "leipzig",
    "dresden",
    "hannover",
    "nurnberg",
    "nuernberg",
    "bremen",
    "essen",
    "dortmund",
    "bonn",
    // Netherlands
    "amsterdam",
    "rotterdam",
    "den haag",
    "utrecht",
    "eindhoven",
    "groningen",
    "haarlem",
    "leiden",
    "tilburg",
    "breda",
    "nijmegen",
    "arnhem",
    "zwolle",
    "middelburg",
    // France
    "paris",
    "lyon",
    "marseille",
    "toulouse",
    "nantes",
    "lille",
    "bordeaux",
    "rennes",
    "nice",
    "strasbourg",
    "montpellier",
    // Spain
    "madrid",
    "barcelona",
    "valencia",
    "sevilla",
    "bilbao",
    "malaga",
    "zaragoza",
    "alicante",
    "granada",
    "palma",
    // Italy
    "milano",
    "roma",
    "torino",
    "bologna",
    "firenze",
    "napoli",
    "verona",
    "genova",
    "venezia",
    "palermo",
    "bari",
    // Portugal
    "lisboa",
    "porto",
    "braga",
    "coimbra",
    "faro",
    "aveiro",
    // Brazil
    "sao paulo",
    "rio de janeiro",
    "belo horizonte",
    "curitiba",
    "porto alegre",
    "recife",
    "salvador",
    "fortaleza",
    "brasilia",
    "campinas",
];

/// US states' and territories' codes, as card descriptors end.
pub(super) const US_STATES: &[&str] = &[
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
    "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY",
    "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV",
    "WI", "WY", "DC", "PR",
];

/// How many of a name's last words are a place: a listed city, or one
/// followed by a US state's code. Leaves at least two words of name, and
/// an institution's city (`Comune di Milano`, `Stadtkasse Muenchen`)
/// where a preposition or a single word comes before it.
/// Whether `word` is a city of the list, as a terminal writes it.
pub(super) fn is_city(word: &str) -> bool {
    CITIES.contains(&super::fold(&[Some(word)]).trim())
}

pub(super) fn trailing_place(words: &[&str]) -> usize {
    let folded: Vec<String> = words
        .iter()
        .map(|w| super::fold(&[Some(w)]).trim().to_owned())
        .collect();
    let state = usize::from(
        words
            .last()
            .is_some_and(|w| US_STATES.contains(w) && words.len() > 2),
    );
    let before_state = folded.len() - state;
    for city_words in (1..=3).rev() {
        if before_state < city_words + 2 {
            continue;
        }
        let start = before_state - city_words;
        let city = folded[start..before_state].join(" ");
        let joined_before = &folded[start - 1];
        const PREPOSITIONS: &[&str] = &[
            "de", "di", "da", "do", "du", "van", "von", "of", "del", "aus", "in",
        ];
        if CITIES.contains(&city.as_str()) && !PREPOSITIONS.contains(&joined_before.as_str()) {
            return city_words + state;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::trailing_place;

    #[test]
    fn a_place_after_a_name_is_found_and_an_institutions_kept() {
        assert_eq!(trailing_place(&["BAR", "SPORT", "ROMA"]), 1);
        assert_eq!(
            trailing_place(&["CORNER", "BREW", "SAN", "FRANCISCO", "CA"]),
            3
        );
        assert_eq!(trailing_place(&["COMUNE", "DI", "MILANO"]), 0);
        assert_eq!(trailing_place(&["STADTWERKE", "MUENCHEN"]), 0);
        assert_eq!(trailing_place(&["JOES", "PIZZA"]), 0);
    }
}
