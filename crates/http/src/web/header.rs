//! What a page's header bar shows beside the brand (`_header.html`): the
//! app a person connects their bank for, or the navigation of the
//! dashboard they are signed in to. The connection pages, the confirmation
//! pages and every surface's error pages show it.

#[derive(Debug, Clone)]
pub(super) enum Header {
    /// "for Budget app": the app the person connects their bank for.
    App { app_name: String },
    /// The Personal dashboard's navigation, with its sign-out form.
    Dashboard { email: String, csrf: String },
    /// The developer dashboard's navigation, with its sign-out form.
    Developers { email: String, csrf: String },
    /// Only the way to a surface's home, for a visitor the page does not
    /// know: signed out, or refused before their session was read.
    Home {
        label: &'static str,
        href: &'static str,
    },
    /// Nothing: a request refused before it reached any surface.
    Brand,
}
