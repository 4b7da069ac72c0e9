//! Asking before anything is erased, revoked or cut off: a page at the
//! action's own address (GET) that names the thing, says in plain words
//! what will stop working, and holds a button that posts to that address
//! and a link back that leaves everything as it was. It works without
//! JavaScript, and the POST is the endpoint the lists' forms always
//! posted to, so a program that posts there directly is unaffected.

use super::header::Header;
use super::page::{PageError, render};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

/// What a confirmation page asks.
#[derive(Debug)]
pub(super) struct Ask {
    pub title: &'static str,
    /// Names the thing: "Revoke the key Budget spreadsheet?".
    pub question: String,
    /// What follows, in plain words: what stops working, and whether it
    /// can be undone.
    pub consequence: &'static str,
    pub button: &'static str,
    pub button_id: &'static str,
    /// A red button: the action destroys or cuts off (disconnecting a
    /// bank keeps its data, and is not).
    pub danger: bool,
    /// The link back: "Keep it".
    pub keep: &'static str,
}

#[derive(Template)]
#[template(path = "confirm.html")]
struct ConfirmPage<'a> {
    title: &'a str,
    header: Header,
    csrf: &'a str,
    ask: &'a Ask,
    /// Where the form posts: the page's own address.
    action: &'a str,
    /// What the form posts besides the CSRF token.
    fields: &'a [(&'a str, &'a str)],
    /// Where "Keep it" leads: the list the person came from.
    back: &'a str,
}

/// The page that asks `ask` at the request's address, its form posting
/// there with `csrf`.
pub(super) fn ask_first(
    req: &HttpRequest,
    header: Header,
    csrf: &str,
    ask: &Ask,
    back: &str,
) -> Result<HttpResponse, PageError> {
    ask_first_posting(req, header, csrf, ask, back, &[])
}

/// [`ask_first`], the form also posting `fields` (which redirect URI to
/// remove, say).
pub(super) fn ask_first_posting(
    req: &HttpRequest,
    header: Header,
    csrf: &str,
    ask: &Ask,
    back: &str,
    fields: &[(&str, &str)],
) -> Result<HttpResponse, PageError> {
    render(&ConfirmPage {
        title: ask.title,
        header,
        csrf,
        ask,
        action: req.path(),
        fields,
        back,
    })
}
