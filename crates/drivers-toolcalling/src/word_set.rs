//! A short list of words the reply checks look for, ignoring ASCII case, without a
//! lower-cased copy of the text. Each list is a `static`, and its table (for each byte, which
//! words begin with it, in either case) is built at compile time: built on every search, the
//! table cost more than the search of a short reply (issue 35: five such searches cost 2,830
//! instructions of a 2-step run's 63,000).

/// At most this many words per set: one bit each in a `u32`.
const MAX_WORDS: usize = u32::BITS as usize;

/// A set of at most 32 words, looked up ignoring ASCII case: inside a text
/// ([`WordSet::in_text`]) or as a whole word ([`WordSet::holds`]).
#[derive(Debug)]
pub(crate) struct WordSet<'w> {
    words: &'w [&'w str],
    /// Bit `i` of `starts[b]`: word `i` begins with byte `b` (either case).
    starts: [u32; 256],
    /// Bit `i` of `seconds[b]`: word `i`'s second byte is `b` (either case), or word `i` is
    /// one byte long. A place in a text whose first byte begins some words is compared only
    /// with those whose second byte also fits: in a reply most places that begin a word of
    /// the set go no further (issue 35: the first-byte table alone left `in_text` at about
    /// 20 instructions per byte of a reply).
    seconds: [u32; 256],
    /// Bit `i`: word `i` is one byte long (it fits at a text's last byte).
    single: u32,
    /// Whether one of the words is empty: then every text holds one.
    has_empty: bool,
}

impl<'w> WordSet<'w> {
    /// The set of `words`. Meant for a `static`, so that the table is built by the compiler.
    ///
    /// # Panics
    ///
    /// With more than 32 words (at compile time, for a `static`).
    pub(crate) const fn new(words: &'w [&'w str]) -> Self {
        assert!(words.len() <= MAX_WORDS, "a WordSet holds at most 32 words");
        let mut starts = [0u32; 256];
        let mut seconds = [0u32; 256];
        let mut single = 0u32;
        let mut has_empty = false;
        let mut i = 0;
        while i < words.len() {
            let word = words[i].as_bytes();
            let bit = 1 << i;
            if word.is_empty() {
                has_empty = true;
            } else {
                starts[word[0].to_ascii_lowercase() as usize] |= bit;
                starts[word[0].to_ascii_uppercase() as usize] |= bit;
                if word.len() == 1 {
                    single |= bit;
                } else {
                    seconds[word[1].to_ascii_lowercase() as usize] |= bit;
                    seconds[word[1].to_ascii_uppercase() as usize] |= bit;
                }
            }
            i += 1;
        }
        // A one-byte word fits whatever byte follows it.
        let mut b = 0;
        while b < 256 {
            seconds[b] |= single;
            b += 1;
        }
        Self {
            words,
            starts,
            seconds,
            single,
            has_empty,
        }
    }

    /// Whether `text` holds one of the words anywhere (ASCII case ignored): one pass over its
    /// bytes, comparing at each place only the words that begin with its first two bytes.
    pub(crate) fn in_text(&self, text: &str) -> bool {
        let text = text.as_bytes();
        self.has_empty
            || text.iter().enumerate().any(|(at, &byte)| {
                let starting = self.starts[usize::from(byte)];
                if starting == 0 {
                    return false;
                }
                let fitting = match text.get(at + 1) {
                    Some(&next) => starting & self.seconds[usize::from(next)],
                    None => starting & self.single,
                };
                fitting != 0
                    && Self::words_of(self.words, fitting).any(|word| {
                        text.get(at..at + word.len())
                            .is_some_and(|here| here.eq_ignore_ascii_case(word))
                    })
            })
    }

    /// Whether `word` is one of the words (ASCII case ignored).
    pub(crate) fn holds(&self, word: &[u8]) -> bool {
        match word.first() {
            None => self.has_empty,
            Some(&first) => self
                .candidates(first)
                .any(|known| known.eq_ignore_ascii_case(word)),
        }
    }

    /// The words that begin with `byte` (either case).
    fn candidates(&self, byte: u8) -> impl Iterator<Item = &'w [u8]> {
        Self::words_of(self.words, self.starts[usize::from(byte)])
    }

    /// The words of `words` whose bits are set in `bits`.
    fn words_of(words: &'w [&'w str], mut bits: u32) -> impl Iterator<Item = &'w [u8]> {
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                words[i].as_bytes()
            })
        })
    }
}

/// Whether `text` holds a typographic apostrophe (’, as in "I’ve"), which the checks read as
/// `'`. Its first byte is looked for first: a search for the character itself costs more than
/// a word search of a short reply.
pub(crate) fn has_curly_apostrophe(text: &str) -> bool {
    text.as_bytes().contains(&0xE2) && text.contains('\u{2019}')
}

/// Whether `phrase` occurs in `text` starting and ending at word boundaries: no letter or
/// digit just before or after it. An empty phrase occurs nowhere.
pub(crate) fn contains_word(text: &str, phrase: &str) -> bool {
    !phrase.is_empty()
        && text
            .match_indices(phrase)
            .any(|(at, _)| at_word_boundaries(text, at, phrase.len()))
}

/// Whether the `len` bytes of `text` at `at` start and end at word boundaries.
pub(crate) fn at_word_boundaries(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].chars().next_back();
    let after = text[at + len..].chars().next();
    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_contained_only_whole() {
        assert!(contains_word("the port is 8080.", "8080"));
        assert!(contains_word("debug mode", "debug"));
        assert!(!contains_word("80801", "8080"));
        assert!(!contains_word("debugging", "debug"));
        assert!(!contains_word("anything", ""));
    }

    #[test]
    fn a_word_is_found_in_any_ascii_case() {
        for (text, word) in [
            ("The tool said ok.", "use"),
            ("You can USE the tool", "use"),
            ("use", "use"),
            ("us", "use"),
            ("", "use"),
            ("anything", ""),
            ("Ünïcode then HOW", "how"),
            ("caLL", "call"),
            ("I'LL do it", "i'll"),
        ] {
            assert_eq!(
                WordSet::new(&[word]).in_text(text),
                text.to_ascii_lowercase().contains(word),
                "{text:?} {word:?}"
            );
        }
    }

    #[test]
    fn a_static_set_is_built_at_compile_time() {
        static SET: WordSet<'static> = WordSet::new(&["need", "steps", "I'll"]);
        assert!(SET.in_text("First, I NEED the file"));
        assert!(SET.in_text("i'll read it"));
        assert!(!SET.in_text("The port is 8472."));
        assert!(SET.holds(b"Steps"));
        assert!(!SET.holds(b"step"));
        assert!(!SET.holds(b"stepss"));
        assert!(!SET.holds(b""));
    }

    proptest::proptest! {
        #[test]
        fn in_text_is_a_lower_cased_search_for_each_word(
            text in "[a-cA-C' éÉ]{0,40}",
            words in proptest::collection::vec("[a-cA-C'é]{0,4}", 0..=32),
        ) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let lower = text.to_ascii_lowercase();
            proptest::prop_assert_eq!(
                WordSet::new(&words).in_text(&text),
                words.iter().any(|word| lower.contains(&word.to_ascii_lowercase()))
            );
        }

        #[test]
        fn holds_is_a_lower_cased_comparison_with_each_word(
            word in "[a-cA-C']{0,4}",
            words in proptest::collection::vec("[a-cA-C']{0,4}", 0..=32),
        ) {
            let list: Vec<&str> = words.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(
                WordSet::new(&list).holds(word.as_bytes()),
                words.iter().any(|known| known.eq_ignore_ascii_case(&word))
            );
        }
    }
}
