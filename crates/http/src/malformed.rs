//! Answers for requests the HTTP/1 codec refuses before any route sees them:
//! headers beyond its 32 KiB buffer (431), and a request line, header or
//! framing that is not valid HTTP (400: a control character in `Host`,
//! `Content-Length` beside `Transfer-Encoding`, a negative or overflowing
//! `Content-Length`, a broken chunk). actix-http writes those with an empty
//! body and has no hook for them, so each connection's writer is wrapped:
//! an error head that no route produced (every route's answer carries
//! `x-request-id`) is rewritten into the JSON envelope on API paths, and
//! into the HTML error page on the browser pages.

use crate::request_id;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection whose bare error answers are given a body.
#[derive(Debug)]
pub struct Answering<T> {
    io: T,
    /// Whether this server has browser pages (the Platform interface).
    pages: bool,
    /// Whether the request being read is for a page, from its request line.
    reading_page: bool,
    /// A rewritten answer not yet handed to the socket.
    pending: Vec<u8>,
}

impl<T> Answering<T> {
    pub fn new(io: T, pages: bool) -> Self {
        Self {
            io,
            pages,
            reading_page: false,
            pending: Vec::new(),
        }
    }

    /// Notes which kind of path a request line at the start of `chunk`
    /// asks for (a request line too long to parse still starts a chunk).
    fn note_request(&mut self, chunk: &[u8]) {
        let Some(space) = chunk.iter().take(16).position(|b| *b == b' ') else {
            return;
        };
        let (method, rest) = chunk.split_at(space);
        if method.is_empty() || !method.iter().all(u8::is_ascii_uppercase) {
            return;
        }
        let path = &rest[1..];
        if path.starts_with(b"/") {
            self.reading_page = self.pages && !is_api_path(path);
        }
    }

    /// The answer to write instead of `buf`, when `buf` is a bare error.
    fn rewrite(&self, buf: &[u8]) -> Option<Vec<u8>> {
        let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
        let head = std::str::from_utf8(&buf[..head_end]).ok()?;
        let status: u16 = head
            .strip_prefix("HTTP/1.1 ")
            .or_else(|| head.strip_prefix("HTTP/1.0 "))?
            .get(..3)?
            .parse()
            .ok()?;
        let lower = head.to_ascii_lowercase();
        let bare = (400..600).contains(&status)
            && !lower.contains("\r\nx-request-id:")
            && lower.contains("\r\ncontent-length: 0\r\n");
        if !bare || head_end != buf.len() {
            return None;
        }
        let id = request_id::generate();
        if status == 408 {
            // A connection that said nothing before its timeout (a
            // browser's spare keep-alive socket): routine, not a warning.
            log::debug!("request {id} timed out before its head arrived: 408");
        } else {
            log::warn!("request {id} refused by the HTTP parser: {status}");
        }
        let (content_type, body) = if self.reading_page {
            ("text/html; charset=utf-8", page_body(status, &id))
        } else {
            ("application/json", envelope(status, &id))
        };
        let mut answer = String::new();
        for line in head.trim_end().split("\r\n") {
            if !line.to_ascii_lowercase().starts_with("content-length:") {
                answer.push_str(line);
                answer.push_str("\r\n");
            }
        }
        answer.push_str(&format!(
            "content-type: {content_type}\r\ncontent-length: {}\r\nx-request-id: {id}\r\n\
             x-content-type-options: nosniff\r\ncache-control: no-store\r\n\r\n",
            body.len()
        ));
        let mut bytes = answer.into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        Some(bytes)
    }
}

fn is_api_path(path: &[u8]) -> bool {
    ["/api/", "/healthz", "/readyz", "/.well-known/"]
        .iter()
        .any(|prefix| path.starts_with(prefix.as_bytes()))
}

/// (code, message) for an error the parser raised.
fn explain(status: u16) -> (&'static str, &'static str) {
    match status {
        431 => (
            "HEADERS_TOO_LARGE",
            "The request's line and headers are larger than the server reads (32 KiB); nothing was done.",
        ),
        408 => (
            "REQUEST_TIMEOUT",
            "The request's headers did not arrive in time; nothing was done.",
        ),
        400..=499 => (
            "MALFORMED_REQUEST",
            "The request is not valid HTTP/1.1 (its request line, a header or its body framing); nothing was done.",
        ),
        _ => (
            "INTERNAL_ERROR",
            "An internal error occurred; quote the request id when reporting it.",
        ),
    }
}

fn reason(status: u16) -> &'static str {
    actix_web::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

fn envelope(status: u16, id: &str) -> String {
    let (code, message) = explain(status);
    serde_json::json!({
        "error": reason(status),
        "message": message,
        "code": code,
        "request_id": id,
    })
    .to_string()
}

fn page_body(status: u16, id: &str) -> String {
    let (_, message) = explain(status);
    crate::web::error_page_html(reason(status), message, id)
}

impl<T: AsyncWrite + Unpin> Answering<T> {
    /// Hands the rewritten answer to the socket.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let written = ready!(Pin::new(&mut self.io).poll_write(cx, &self.pending))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..written);
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Answering<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.note_request(&buf.filled()[before..]);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Answering<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        if let Some(answer) = this.rewrite(buf) {
            this.pending = answer;
            // The bytes are taken; what the socket does not take now goes
            // out on the flush that follows.
            if let Poll::Ready(Err(err)) = this.poll_drain(cx) {
                return Poll::Ready(Err(err));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::Answering;

    #[test]
    fn only_bare_error_heads_are_rewritten() {
        let mut conn = Answering::new((), true);
        conn.note_request(b"GET /api/v1/accounts?x=1 HTTP/1.1\r\n");
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let answer = String::from_utf8(conn.rewrite(bare).unwrap()).unwrap();
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
        assert!(
            answer.contains("content-type: application/json"),
            "{answer}"
        );
        assert!(answer.contains("connection: close"), "{answer}");
        assert!(answer.contains(r#""code":"HEADERS_TOO_LARGE""#), "{answer}");
        // Answers from routes carry x-request-id and are left alone.
        let routed = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nx-request-id: req_1\r\n\r\n";
        assert!(conn.rewrite(routed).is_none());
        assert!(
            conn.rewrite(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                .is_none()
        );
        // On a page path, the HTML page.
        conn.note_request(b"GET /connect/banks HTTP/1.1\r\n");
        let answer = String::from_utf8(conn.rewrite(bare).unwrap()).unwrap();
        assert!(answer.contains("text/html"), "{answer}");
    }
}
