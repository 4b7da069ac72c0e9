//! The baseline: a bare actix-web server on the same machine, with as many
//! workers as Tributary's, answering each path with the bytes Tributary
//! answered it with, from memory. What it reaches is what this machine and
//! actix-web allow; Tributary's figures are read as a share of it.

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// What the bare server answers a path (with its query) with.
#[derive(Debug)]
pub struct Stored {
    pub body: Vec<u8>,
    pub content_type: String,
    pub etag: Option<String>,
}

/// Path (with its query) → its answer.
pub type Answers = Arc<HashMap<String, Stored>>;

/// Starts the bare server on a free loopback port.
pub fn start(answers: Answers) -> std::io::Result<(actix_web::dev::ServerHandle, SocketAddr)> {
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(answers.clone()))
            .default_service(web::to(answer))
    })
    .workers(workers)
    .bind("127.0.0.1:0")?;
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    Ok((handle, addr))
}

async fn answer(req: HttpRequest, answers: web::Data<Answers>) -> HttpResponse {
    let key = match req.uri().path_and_query() {
        Some(path) => path.as_str(),
        None => req.path(),
    };
    let Some(stored) = answers.get(key) else {
        return HttpResponse::NotFound().finish();
    };
    // A conditional request gets 304 without a look at the tag: the least
    // a server can do for one.
    if let Some(etag) = &stored.etag
        && req.headers().contains_key("if-none-match")
    {
        return HttpResponse::NotModified()
            .insert_header(("etag", etag.as_str()))
            .finish();
    }
    let mut answer = HttpResponse::Ok();
    answer.content_type(stored.content_type.as_str());
    if let Some(etag) = &stored.etag {
        answer.insert_header(("etag", etag.as_str()));
    }
    answer.body(stored.body.clone())
}
