//! The pages' Content-Security-Policy. Every page gets [`Policy::strict`]
//! (the `security_headers` default); a page whose forms lead off this
//! server, or that shows another site's images, sets its own policy with
//! exactly those sources added, and the default then leaves it alone.
//!
//! `form-action` matters beyond the form's own `action`: browsers (Chromium
//! at least) check it against every redirect that follows a form post, so
//! a page whose form ends in a redirect to another site must name that site
//! (docs/platform.md, "Content-Security-Policy").

use actix_web::HttpResponse;
use actix_web::http::header::{CONTENT_SECURITY_POLICY, HeaderValue};

/// Scripts only from this server's own files (`/static/progress.js`, which
/// reads the progress page again: `connect-src 'self'`) unless a page adds
/// a provider's; nothing inline, no frames (unless a page adds a
/// provider's), no plugins; images only where a page adds them.
const FIXED: &str = "default-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// A page's policy: the fixed directives, and where its forms may lead and
/// its images come from.
#[derive(Debug, Clone)]
pub(super) struct Policy {
    form_action: Vec<String>,
    img_src: Vec<String>,
    /// Scripts besides this server's own.
    script_src: Vec<String>,
    /// Where a provider's script opens frames and sends requests.
    provider_origins: Vec<String>,
    /// Whether `<style>` elements a provider's script adds apply.
    inline_styles: bool,
}

impl Policy {
    /// Forms post to this server and go no further; no images.
    pub fn strict() -> Self {
        Self {
            form_action: vec!["'self'".to_owned()],
            img_src: Vec::new(),
            script_src: Vec::new(),
            provider_origins: Vec::new(),
            inline_styles: false,
        }
    }

    /// Styles also from `<style>` elements: a provider's enrollment
    /// script that styles its modal so (Pluggy Connect), on its connect
    /// page only. The page still loads no images or fonts, so a style
    /// cannot send what the page holds anywhere.
    pub fn inline_styles(mut self) -> Self {
        self.inline_styles = true;
        self
    }

    /// Scripts also from `url` (its origin): a provider's own enrollment
    /// script (Teller Connect), on its connect page only.
    pub fn scripts_from(mut self, url: &str) -> Self {
        if let Some(source) =
            source_of(url).filter(|s| s.starts_with("https://") || s.starts_with("http://"))
        {
            self.script_src.push(source);
        }
        self
    }

    /// Frames and requests to the origins of `urls` (https only): where a
    /// provider's script opens its frame and sends its requests.
    pub fn frames_and_requests_to<'a>(mut self, urls: impl IntoIterator<Item = &'a str>) -> Self {
        self.provider_origins.extend(
            urls.into_iter()
                .filter_map(source_of)
                .filter(|s| s.starts_with("https://")),
        );
        self
    }

    /// Forms may also lead to `url`'s origin (for a URL with no host, such
    /// as an app's `com.example.app:/callback`, to its scheme).
    pub fn form_action_to(mut self, url: &str) -> Self {
        if let Some(source) = source_of(url) {
            self.form_action.push(source);
        }
        self
    }

    /// Forms may also lead to any https site: for the pages that hand a
    /// person on to a bank, a bank's aggregator or a payment processor,
    /// whose address is only known once the form was posted.
    pub fn form_action_to_any_https_site(mut self) -> Self {
        self.form_action.push("https:".to_owned());
        self
    }

    /// Images from the origins of `urls` (https only: other images would
    /// be mixed content or local addresses, and are left out).
    pub fn images_from<'a>(mut self, urls: impl IntoIterator<Item = &'a str>) -> Self {
        for url in urls {
            if let Some(source) = source_of(url).filter(|s| s.starts_with("https://"))
                && !self.img_src.contains(&source)
            {
                self.img_src.push(source);
            }
        }
        self
    }

    /// The header's value.
    pub fn value(&self) -> String {
        let with = |fixed: &str, more: &[String]| {
            std::iter::once(fixed)
                .chain(more.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let styles = if self.inline_styles {
            "'self' 'unsafe-inline'"
        } else {
            "'self'"
        };
        let mut value = format!(
            "{FIXED}; style-src {styles}; script-src {}; connect-src {}; form-action {}",
            with("'self'", &self.script_src),
            with("'self'", &self.provider_origins),
            self.form_action.join(" ")
        );
        if !self.provider_origins.is_empty() {
            value.push_str("; frame-src ");
            value.push_str(&self.provider_origins.join(" "));
        }
        if !self.img_src.is_empty() {
            value.push_str("; img-src ");
            value.push_str(&self.img_src.join(" "));
        }
        value
    }

    /// `response` with this policy, replacing the default.
    pub fn apply(&self, mut response: HttpResponse) -> HttpResponse {
        if let Ok(value) = HeaderValue::from_str(&self.value()) {
            response
                .headers_mut()
                .insert(CONTENT_SECURITY_POLICY, value);
        }
        response
    }
}

/// The CSP source expression for `url`: its origin (`https://host:port`),
/// or `scheme:` for a URL without a host. `None` for what does not parse.
/// Parsing first means no character of the URL can end the directive.
fn source_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let origin = parsed.origin();
    Some(if origin.is_tuple() {
        origin.ascii_serialization()
    } else {
        format!("{}:", parsed.scheme())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strict_policy_keeps_forms_here_and_loads_no_images() {
        let value = Policy::strict().value();
        assert!(value.contains("form-action 'self'"), "{value}");
        assert!(!value.contains("img-src"), "{value}");
        assert!(value.contains("default-src 'none'"), "{value}");
    }

    #[test]
    fn a_providers_script_and_frames_are_let_in_only_where_added() {
        let strict = Policy::strict().value();
        assert!(strict.contains("script-src 'self';"), "{strict}");
        assert!(strict.contains("connect-src 'self';"), "{strict}");
        assert!(!strict.contains("frame-src"), "{strict}");
        let widget = Policy::strict()
            .scripts_from("https://cdn.teller.io/connect/connect.js")
            .frames_and_requests_to(["https://teller.io", "javascript:alert(1); script-src *"])
            .value();
        assert!(
            widget.contains("script-src 'self' https://cdn.teller.io;"),
            "{widget}"
        );
        assert!(
            widget.contains("connect-src 'self' https://teller.io;"),
            "{widget}"
        );
        assert!(
            widget.ends_with("; frame-src https://teller.io"),
            "{widget}"
        );
        assert!(widget.contains("style-src 'self';"), "{widget}");
        let styled = Policy::strict().inline_styles().value();
        assert!(
            styled.contains("style-src 'self' 'unsafe-inline';"),
            "{styled}"
        );
        assert!(!styled.contains("img-src"), "{styled}");
    }

    #[test]
    fn sources_are_origins_and_nothing_of_the_url_leaks_into_the_header() {
        let value = Policy::strict()
            .form_action_to("https://app.example:8443/callback?x=1; script-src *")
            .form_action_to("com.example.app:/callback")
            .form_action_to("not a url")
            .value();
        assert!(
            value.ends_with("form-action 'self' https://app.example:8443 com.example.app:"),
            "{value}"
        );
        let images = Policy::strict()
            .images_from([
                "https://cdn.example/a.png",
                "https://cdn.example/b.png",
                "http://plain.example/c.png",
                "data:image/png;base64,AAAA",
            ])
            .value();
        assert!(
            images.ends_with("; img-src https://cdn.example"),
            "{images}"
        );
    }
}
