//! An OFX file's text, decoded and cut into tags and values piece by
//! piece, so that a file is never held whole: a statement of a million
//! entries is read 64 KiB at a time (the decoded text kept is a few times
//! that, or the longest tag or value), once for each pass (see
//! [`super::survey`]).

use super::super::error::{Place, ReadError, Reason};
use sha2::{Digest, Sha256};
use std::io::Read;

/// Where a statement file's bytes come from: read again from its start for
/// each pass.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// Bytes already in memory (an upload).
    Bytes(&'a [u8]),
    /// A file on disk (`tributary import`), opened again for each pass and
    /// checked to be unchanged between them.
    Path(&'a std::path::Path),
}

impl<'a> Source<'a> {
    fn open(&self) -> Result<Box<dyn Read + 'a>, ReadError> {
        match self {
            Source::Bytes(bytes) => Ok(Box::new(*bytes)),
            Source::Path(path) => std::fs::File::open(path)
                .map(|file| Box::new(file) as Box<dyn Read>)
                .map_err(|err| ReadError::of_file(Reason::Unavailable(err.to_string()))),
        }
    }

    /// The first bytes, where an OFX 1.x header names the character set.
    fn head(&self) -> Result<Vec<u8>, ReadError> {
        let mut head = Vec::with_capacity(HEAD);
        self.open()?
            .take(HEAD as u64)
            .read_to_end(&mut head)
            .map_err(|err| ReadError::of_file(Reason::Unavailable(err.to_string())))?;
        Ok(head)
    }
}

/// How much of the start of a file the header's `CHARSET` is looked for in.
const HEAD: usize = 600;

/// How much is read from the source at a time. The reader's own tests
/// read 7 bytes at a time, so that every tag, value and multi-byte
/// character of their files is cut somewhere.
const CHUNK: usize = if cfg!(test) { 7 } else { 64 * 1024 };

/// The longest tag or value read (OFX's longest elements are a few hundred
/// characters): past it the file is refused rather than held.
pub const MAX_TOKEN: usize = 16 * 1024 * 1024;

/// The character set a file is decoded with, chosen once for all passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charset {
    encoding: &'static encoding_rs::Encoding,
    /// Nothing names it: UTF-8 when every byte is, else Windows-1252. The
    /// first pass decodes strictly and says when it was not.
    guessed_utf8: bool,
}

impl Charset {
    /// By the header's `CHARSET` / `ENCODING` (OFX 1.x) or the XML
    /// declaration (2.x); UTF-8 (strictly, see [`Charset::guessed_utf8`])
    /// when nothing says.
    pub fn of(source: &Source<'_>) -> Result<Charset, ReadError> {
        let head = source.head()?;
        let head = String::from_utf8_lossy(&head).to_ascii_uppercase();
        let value_of = |key: &str| {
            head.split(key).nth(1).map(|rest| {
                rest.trim_start_matches(['=', ':', '"', ' '])
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect::<String>()
            })
        };
        let label = match (value_of("CHARSET"), value_of("ENCODING")) {
            (_, Some(e)) if e == "UTF-8" => Some("utf-8"),
            (Some(c), _) if c == "1252" => Some("windows-1252"),
            (Some(c), _) if c.starts_with("ISO-8859") || c.starts_with("8859") => {
                Some("iso-8859-1")
            }
            _ => None,
        };
        Ok(
            match label.and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes())) {
                Some(encoding) => Charset {
                    encoding,
                    guessed_utf8: false,
                },
                None => Charset {
                    encoding: encoding_rs::UTF_8,
                    guessed_utf8: true,
                },
            },
        )
    }

    /// What a file nothing names is when it is not UTF-8.
    pub fn not_utf8() -> Charset {
        Charset {
            encoding: encoding_rs::WINDOWS_1252,
            guessed_utf8: false,
        }
    }
}

/// One piece of the body: a tag (between `<` and `>`) or the text between
/// two tags, as a range of [`Text::piece`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Tag { at: usize, len: usize },
    Value { len: usize },
}

/// Why the text stopped.
#[derive(Debug)]
pub enum TextError {
    /// A file nothing names as another character set is not UTF-8.
    NotUtf8,
    Read(ReadError),
}

impl From<ReadError> for TextError {
    fn from(err: ReadError) -> Self {
        TextError::Read(err)
    }
}

/// The decoded text of one pass over a source.
pub struct Text<'a> {
    source: Box<dyn Read + 'a>,
    decoder: encoding_rs::Decoder,
    strict: bool,
    raw: Vec<u8>,
    text: String,
    /// Where the unread text begins in `text`.
    start: usize,
    /// Decoded bytes dropped from the front of `text` so far: positions
    /// in messages count from the file's decoded start.
    dropped: usize,
    /// How far a search for the end of the token at `start` has looked.
    searched: usize,
    done: bool,
    /// The raw bytes' digest, for a source that could change between passes.
    digest: Option<Sha256>,
}

impl<'a> Text<'a> {
    pub fn open(source: &Source<'a>, charset: Charset) -> Result<Text<'a>, ReadError> {
        Ok(Text {
            source: source.open()?,
            // As `Encoding::decode` does: a byte order mark decides.
            decoder: charset.encoding.new_decoder(),
            strict: charset.guessed_utf8,
            raw: vec![0; CHUNK],
            text: String::new(),
            start: 0,
            dropped: 0,
            searched: 0,
            done: false,
            digest: matches!(source, Source::Path(_)).then(Sha256::new),
        })
    }

    /// Reads and decodes the next chunk onto `text`; `false` at the end.
    fn fill(&mut self) -> Result<bool, TextError> {
        if self.done {
            return Ok(false);
        }
        // What was read is dropped once it is most of the buffer.
        if self.start > CHUNK && self.start * 2 > self.text.len() {
            self.text.drain(..self.start);
            self.dropped += self.start;
            self.start = 0;
        }
        let read = loop {
            match self.source.read(&mut self.raw) {
                Ok(read) => break read,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    return Err(ReadError::of_file(Reason::Unavailable(err.to_string())).into());
                }
            }
        };
        let last = read == 0;
        let mut input = &self.raw[..read];
        if let Some(digest) = &mut self.digest {
            digest.update(input);
        }
        loop {
            let room = self
                .decoder
                .max_utf8_buffer_length(input.len())
                .unwrap_or(input.len() * 3 + 16);
            self.text.reserve(room);
            let (empty, used) = if self.strict {
                let (result, used) =
                    self.decoder
                        .decode_to_string_without_replacement(input, &mut self.text, last);
                if matches!(result, encoding_rs::DecoderResult::Malformed(..)) {
                    return Err(TextError::NotUtf8);
                }
                (result == encoding_rs::DecoderResult::InputEmpty, used)
            } else {
                let (result, used, _) = self.decoder.decode_to_string(input, &mut self.text, last);
                (result == encoding_rs::CoderResult::InputEmpty, used)
            };
            input = &input[used..];
            if empty {
                break;
            }
        }
        self.done = last;
        Ok(true)
    }

    /// Skips to the `<OFX>` element; `false` when the file has none.
    pub fn skip_to_body(&mut self) -> Result<bool, TextError> {
        loop {
            let unread = &self.text[self.start..];
            if let Some(found) = unread.find("<OFX>").or_else(|| unread.find("<OFX ")) {
                self.start += found;
                return Ok(true);
            }
            // Keep the last few bytes: the name may straddle two chunks.
            let mut keep = self.text.len().saturating_sub(4).max(self.start);
            while !self.text.is_char_boundary(keep) {
                keep -= 1;
            }
            self.start = keep;
            if !self.fill()? {
                return Ok(false);
            }
        }
    }

    /// The position of the unread text, in decoded bytes from the start.
    pub fn position(&self) -> usize {
        self.dropped + self.start
    }

    /// The next tag or value; `None` at the end.
    pub fn next_token(&mut self) -> Result<Option<Token>, TextError> {
        loop {
            let unread = &self.text[self.start..];
            let tag = unread.starts_with('<');
            let from = self.searched.max(usize::from(tag));
            let end = unread
                .get(from..)
                .and_then(|rest| rest.find(if tag { '>' } else { '<' }))
                .map(|found| from + found);
            match (end, tag) {
                (Some(end), true) => {
                    let at = self.start + 1;
                    self.start += end + 1;
                    self.searched = 0;
                    return Ok(Some(Token::Tag { at, len: end - 1 }));
                }
                (Some(end), false) => {
                    self.start += end;
                    self.searched = 0;
                    return Ok(Some(Token::Value { len: end }));
                }
                (None, _) if self.done => {
                    if tag {
                        return Err(Place::new(format!("byte {}", self.position()))
                            .at(Reason::Structure("a tag is not closed".to_owned()))
                            .into());
                    }
                    if unread.is_empty() {
                        return Ok(None);
                    }
                    let len = unread.len();
                    self.start += len;
                    return Ok(Some(Token::Value { len }));
                }
                (None, _) => {
                    if unread.len() > MAX_TOKEN {
                        let why = format!(
                            "a tag or value runs on for more than {} MiB without end",
                            MAX_TOKEN >> 20
                        );
                        return Err(Place::new(format!("byte {}", self.position()))
                            .at(Reason::Structure(why))
                            .into());
                    }
                    self.searched = unread.len();
                    self.fill()?;
                }
            }
        }
    }

    /// A tag's name and attributes (`Tag`), or a value as written (`Value`),
    /// of the token just returned.
    pub fn piece(&self, token: Token) -> &str {
        match token {
            Token::Tag { at, len } => &self.text[at..at + len],
            Token::Value { len } => &self.text[self.start - len..self.start],
        }
    }

    /// The digest of every byte read, once the whole source has been read.
    pub fn finish(self) -> Option<[u8; 32]> {
        self.digest.map(|digest| digest.finalize().into())
    }
}
