//! The built-in load client: keep-alive HTTP/1.1 connections, each sending
//! one request and reading the whole answer before the next (like `wrk`
//! without pipelining), with every latency recorded.

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    pub requests: u64,
    pub elapsed: Duration,
    /// Sorted, in microseconds.
    latencies: Vec<u32>,
}

impl Measured {
    pub fn per_second(&self) -> u64 {
        let micros = u64::try_from(self.elapsed.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        self.requests.saturating_mul(1_000_000) / micros
    }

    /// The latency at `permille` (500 = p50, 999 = p99.9), in microseconds.
    pub fn percentile(&self, permille: usize) -> u32 {
        if self.latencies.is_empty() {
            return 0;
        }
        let index = (self.latencies.len() * permille / 1000).min(self.latencies.len() - 1);
        self.latencies[index]
    }
}

/// A GET of `path` with the headers a client sends.
pub fn request(path: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut text = format!("GET {path} HTTP/1.1\r\nHost: bench\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.into_bytes()
}

/// A POST of `body` (JSON) to `path` with the headers a client sends.
pub fn post(path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!(
        "POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text.into_bytes()
}

/// One answer as [`fetch`] returns it.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub etag: Option<String>,
    pub body: Vec<u8>,
    /// From sending the request to the first byte of the answer's body.
    pub first_byte: Duration,
    /// From sending the request to the answer's last byte.
    pub whole: Duration,
}

/// One request on a new connection.
pub async fn fetch(addr: SocketAddr, request: &[u8]) -> std::io::Result<Fetched> {
    let mut stream = TcpStream::connect(addr).await?;
    let sent = Instant::now();
    stream.write_all(request).await?;
    let mut buf = Vec::new();
    let mut first_byte = None;
    let answer = read_answer(&mut stream, &mut buf, &mut |received| {
        if received {
            first_byte.get_or_insert(sent.elapsed());
        }
    })
    .await?;
    let whole = sent.elapsed();
    Ok(Fetched {
        status: answer.status,
        etag: answer.etag,
        body: buf[answer.body].to_vec(),
        first_byte: first_byte.unwrap_or(whole),
        whole,
    })
}

/// Drives `connections` keep-alive connections for `duration`; fails on any
/// answer whose status is not `expect`.
pub async fn drive(
    addr: SocketAddr,
    request: &[u8],
    expect: u16,
    connections: usize,
    duration: Duration,
) -> std::io::Result<Measured> {
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..connections {
        let request = request.to_vec();
        tasks.spawn(async move { one_connection(addr, &request, expect, deadline).await });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.map_err(std::io::Error::other)??);
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    Ok(Measured {
        requests: u64::try_from(latencies.len()).unwrap_or(u64::MAX),
        elapsed,
        latencies,
    })
}

/// Sends `rate` requests a second for `duration`, spread over
/// `connections` keep-alive connections, each request at its own moment on
/// a fixed schedule whether or not the ones before have been answered (an
/// open loop, as real clients arrive). A request sent late because the
/// answer before it came late is counted from the moment it was due, so a
/// server that falls behind is charged the wait of every request queued
/// behind it (no coordinated omission).
pub async fn drive_at_rate(
    addr: SocketAddr,
    request: &[u8],
    expect: u16,
    connections: usize,
    rate: u64,
    duration: Duration,
) -> std::io::Result<Measured> {
    let started = tokio::time::Instant::now() + Duration::from_millis(10);
    let total = rate.saturating_mul(duration.as_secs()).max(1);
    let interval = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let mut tasks = tokio::task::JoinSet::new();
    let connections = u64::try_from(connections.max(1)).unwrap_or(1);
    for first in 0..connections {
        let request = request.to_vec();
        tasks.spawn(async move {
            let mut stream = TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            let mut buf = Vec::with_capacity(1 << 16);
            let mut latencies = Vec::new();
            // This connection sends requests first, first + connections, …
            let mut n = first;
            while n < total {
                let due = started + interval * u32::try_from(n).unwrap_or(u32::MAX);
                // Late because the server has not answered the one before:
                // the wait is the server's, counted from when it was due.
                // Early: wait for the moment, and count from the sending
                // (the timer wakes up to a millisecond late; that delay is
                // the client's own).
                let since = if tokio::time::Instant::now() >= due {
                    due
                } else {
                    tokio::time::sleep_until(due).await;
                    tokio::time::Instant::now()
                };
                stream.write_all(&request).await?;
                let answer = read_answer(&mut stream, &mut buf, &mut |_| {}).await?;
                if answer.status != expect {
                    return Err(std::io::Error::other(format!("answered {}", answer.status)));
                }
                latencies.push(u32::try_from(since.elapsed().as_micros()).unwrap_or(u32::MAX));
                n += connections;
            }
            Ok::<_, std::io::Error>(latencies)
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.map_err(std::io::Error::other)??);
    }
    latencies.sort_unstable();
    Ok(Measured {
        requests: u64::try_from(latencies.len()).unwrap_or(u64::MAX),
        elapsed: started.elapsed(),
        latencies,
    })
}

async fn one_connection(
    addr: SocketAddr,
    request: &[u8],
    expect: u16,
    deadline: Instant,
) -> std::io::Result<Vec<u32>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(1 << 16);
    let mut latencies = Vec::with_capacity(1 << 16);
    while Instant::now() < deadline {
        let sent = Instant::now();
        stream.write_all(request).await?;
        let answer = read_answer(&mut stream, &mut buf, &mut |_| {}).await?;
        if answer.status != expect {
            return Err(std::io::Error::other(format!(
                "answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&buf[answer.body])
            )));
        }
        latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
    }
    Ok(latencies)
}

struct Answer {
    status: u16,
    etag: Option<String>,
    body: std::ops::Range<usize>,
}

/// Reads one whole answer into `buf` (Content-Length or chunked);
/// `body_seen(true)` is called once body bytes have arrived.
async fn read_answer(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    body_seen: &mut (dyn FnMut(bool) + Send),
) -> std::io::Result<Answer> {
    buf.clear();
    let head_end = loop {
        if let Some(at) = find(buf, b"\r\n\r\n") {
            break at + 4;
        }
        read_more(stream, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let etag = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("etag")
            .then(|| value.trim().to_owned())
    });
    let head = head.to_ascii_lowercase();
    let with = |status, body| Answer {
        status,
        etag: etag.clone(),
        body,
    };
    let status = head
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok());
    if let Some(length) = length {
        while buf.len() < head_end + length {
            body_seen(buf.len() > head_end);
            read_more(stream, buf).await?;
        }
        body_seen(length > 0);
        return Ok(with(status, head_end..head_end + length));
    }
    if !head.contains("transfer-encoding: chunked") {
        return Ok(with(status, head_end..head_end));
    }
    // Chunked: the chunks' data is moved down over their size lines, so the
    // body ends up whole after the head.
    let mut write = head_end;
    let mut read = head_end;
    loop {
        let line_end = loop {
            if let Some(at) = find(&buf[read..], b"\r\n") {
                break read + at;
            }
            read_more(stream, buf).await?;
        };
        let size_text = String::from_utf8_lossy(&buf[read..line_end]).to_string();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| std::io::Error::other(format!("bad chunk size `{size_text}`")))?;
        let data = line_end + 2;
        body_seen(size > 0 && buf.len() > data);
        while buf.len() < data + size + 2 {
            read_more(stream, buf).await?;
        }
        body_seen(size > 0);
        if size == 0 {
            buf.truncate(write);
            return Ok(with(status, head_end..write));
        }
        buf.copy_within(data..data + size, write);
        write += size;
        read = data + size + 2;
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let mut chunk = [0u8; 64 * 1024];
    let n = stream.read(&mut chunk).await?;
    if n == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
