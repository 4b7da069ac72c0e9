//! An account's mask: the last characters of its number, as people
//! recognise it.

/// The last four characters of `number` (all of it when shorter).
pub(crate) fn last_four(number: &str) -> String {
    let tail: Vec<char> = number.chars().rev().take(4).collect();
    tail.into_iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::last_four;

    #[test]
    fn the_last_four_characters_or_all_of_a_shorter_number() {
        assert_eq!(last_four("NL65BUNQ9900000188"), "0188");
        assert_eq!(last_four("12"), "12");
        assert_eq!(last_four(""), "");
    }
}
