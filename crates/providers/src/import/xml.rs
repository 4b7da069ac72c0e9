//! A small element tree over quick-xml events, for statement formats read
//! by path rather than as a stream. Namespace prefixes are dropped (camt's
//! elements are matched by local name in every version).

use super::error::{Place, ReadError, Reason};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

#[derive(Debug, Default, Clone)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub text: String,
    /// The text as readers before 2026-11-25 read it: each piece between
    /// two entity references trimmed (`A &amp; B` read `A&B`). Statement
    /// entries without a unique reference are identified by a hash of their
    /// text; hashing this reading keeps their ids those of earlier imports,
    /// so importing a file again after the fix adds nothing
    /// (docs/imports.md).
    pub identity_text: String,
    pub children: Vec<Element>,
}

/// Which reading of an element's text to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// As written: what is shown and stored.
    AsWritten,
    /// [`Element::identity_text`]: what entry ids are hashed from.
    Identity,
}

impl Element {
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The element at a `/`-separated path below this one.
    pub fn at(&self, path: &str) -> Option<&Element> {
        path.split('/')
            .try_fold(self, |element, name| element.child(name))
    }

    /// The trimmed text at a path, if present and not empty.
    pub fn text_at(&self, path: &str) -> Option<&str> {
        self.read_at(path, Reading::AsWritten)
    }

    /// The text at `path` in `reading`, trimmed; `None` when empty.
    pub fn read_at(&self, path: &str, reading: Reading) -> Option<&str> {
        self.at(path)
            .map(|e| e.read(reading).trim())
            .filter(|t| !t.is_empty())
    }

    pub fn read(&self, reading: Reading) -> &str {
        match reading {
            Reading::AsWritten => &self.text,
            Reading::Identity => &self.identity_text,
        }
    }

    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn local(name: &str) -> String {
    name.rsplit(':').next().unwrap_or_default().to_owned()
}

/// An error at byte `position` of a document.
fn at_byte(position: u64, reason: Reason) -> ReadError {
    Place::new(format!("byte {position}")).at(reason)
}

/// What the XML parser said, as the reason.
fn malformed(err: impl std::fmt::Display) -> Reason {
    Reason::Structure(err.to_string())
}

fn element(start: &BytesStart<'_>, position: u64) -> Result<Element, ReadError> {
    let mut element = Element {
        name: local(start.name().as_ref()),
        ..Element::default()
    };
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|err| at_byte(position, malformed(err)))?;
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|err| at_byte(position, malformed(err)))?
            .into_owned();
        element
            .attributes
            .push((local(attribute.key.as_ref()), value));
    }
    Ok(element)
}

/// Removes leading and trailing whitespace without a new allocation.
fn trim_in_place(text: &mut String) {
    let end = text.trim_end().len();
    text.truncate(end);
    let start = text.len() - text.trim_start().len();
    text.drain(..start);
}

/// Decodes a document to text by its XML declaration's encoding (UTF-8 when
/// it declares none).
pub fn decode(bytes: &[u8]) -> String {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).to_ascii_lowercase();
    let declared = head
        .split("encoding=")
        .nth(1)
        .and_then(|rest| {
            rest.trim_start_matches(['"', '\''])
                .split(['"', '\''])
                .next()
        })
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    declared.decode(bytes).0.into_owned()
}

/// Parses a whole document; an error says where (byte offset) and why.
/// Elements may nest at most [`super::error::MAX_NESTING`] levels.
///
/// An element's text is kept as written, except for whitespace at its
/// start and end (the indentation around child elements). quick-xml
/// reports an entity reference as an event of its own, between two text
/// events, so the text is trimmed once the element ends, never per event:
/// `A &amp; B` stays `A & B`.
pub fn parse(text: &str) -> Result<Element, ReadError> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = vec![Element::default()];
    loop {
        let position = reader.buffer_position();
        let fail = |err: &dyn std::fmt::Display| at_byte(position, malformed(err));
        match reader.read_event().map_err(|err| fail(&err))? {
            Event::Start(start) => {
                // The stack's first entry is the document, not an element.
                if stack.len() > super::error::MAX_NESTING {
                    return Err(at_byte(position, Reason::TooDeep));
                }
                stack.push(element(&start, position)?)
            }
            Event::Empty(start) => {
                let done = element(&start, position)?;
                stack
                    .last_mut()
                    .ok_or_else(|| fail(&"unbalanced tags"))?
                    .children
                    .push(done);
            }
            Event::End(_) => {
                let mut done = stack
                    .pop()
                    .filter(|_| !stack.is_empty())
                    .ok_or_else(|| fail(&"an end tag closes nothing"))?;
                trim_in_place(&mut done.text);
                stack
                    .last_mut()
                    .ok_or_else(|| fail(&"unbalanced tags"))?
                    .children
                    .push(done);
            }
            Event::Text(text) => {
                if let Some(current) = stack.last_mut() {
                    let content = text.xml10_content();
                    current.text.push_str(&content);
                    current
                        .identity_text
                        .push_str(content.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n')));
                }
            }
            Event::GeneralRef(reference) => {
                let name = reference.xml10_content().into_owned();
                let resolved = match reference.resolve_char_ref().map_err(|err| fail(&err))? {
                    Some(c) => c.to_string(),
                    None => quick_xml::escape::resolve_predefined_entity(&name)
                        .map(str::to_owned)
                        .ok_or_else(|| fail(&format!("unknown entity &{name};")))?,
                };
                if let Some(current) = stack.last_mut() {
                    current.text.push_str(&resolved);
                    current.identity_text.push_str(&resolved);
                }
            }
            Event::CData(data) => {
                if let Some(current) = stack.last_mut() {
                    let content = data.xml10_content();
                    current.text.push_str(&content);
                    current.identity_text.push_str(&content);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if stack.len() != 1 {
        let open = stack.last().map(|e| e.name.clone()).unwrap_or_default();
        return Err(at_byte(
            text.len() as u64,
            Reason::Structure(format!("the document ends inside <{open}>")),
        ));
    }
    stack
        .pop()
        .and_then(|root| root.children.into_iter().next())
        .ok_or_else(|| {
            ReadError::of_file(Reason::Structure(
                "the document has no root element".to_owned(),
            ))
        })
}
