//! A server process: its parts from the composition root (`tributary-app`:
//! database, sync engine, worker, mailer, payments, demo data), assembled
//! into the state the handlers share, bound and served.

pub use crate::interface::Interface;
use crate::state::AppState;
use crate::{
    access_log, control_characters, error, malformed, metrics, request_id, routes as route,
};
use actix_web::middleware::from_fn;
use actix_web::{App, web};
use anyhow::Context as _;
use std::net::SocketAddr;
use std::sync::Arc;
use tributary_app::config::Config;
use tributary_app::connectors::{engine_over, sync_engine};
use tributary_app::database::open_database;
use tributary_app::demo;
use tributary_app::links::{DEVELOPERS_ROOT, SIGN_IN_LINK_PATH};
use tributary_app::mail::mailer;
use tributary_app::payments::payments;
use tributary_app::workers::{BackgroundWorker, embedded_concurrency, worker_chore};
use tributary_auth::developers::Signup;
use tributary_domain::clock::{Clock, SystemClock};
use tributary_notify::mail::Mailer;
use tributary_outbound::Guard;
use tributary_providers::Registry;
use tributary_providers::payments::PaymentProcessor;
use tributary_storage::Database;

fn routes(interface: Interface) -> impl Fn(&mut web::ServiceConfig) + Clone {
    move |cfg: &mut web::ServiceConfig| {
        // The JSON interface: exactly what its OpenAPI document describes.
        for (root, operations) in crate::openapi::routed(interface) {
            route::serve(cfg, root, operations);
        }
        cfg.service(route::get("/metrics", metrics::serve::scrape_with_token));
        match interface {
            Interface::Platform => crate::web::configure_pages(cfg),
            Interface::Personal => {
                crate::web::dashboard::configure(cfg);
                crate::mcp::configure(cfg);
            }
        }
        // Both interfaces serve SimpleFIN: Personal users' destinations come
        // from the CLI, app users' from the portal.
        crate::simplefin::configure(cfg, interface);
        // Both take providers' webhooks: connections live on either.
        cfg.service(crate::routes::only(
            web::resource("/providers/{provider}/webhook")
                .app_data(web::PayloadConfig::new(crate::provider_webhooks::MAX_BODY))
                .route(web::post().to(crate::provider_webhooks::receive)),
            "POST",
        ));
    }
}

/// Binds the server; returns it (a future to await or spawn) and the
/// addresses it listens on (the real port when `bind` asked for port 0).
///
/// This is `actix_web::HttpServer` spelled out, for one difference: each
/// connection is wrapped in [`malformed::Answering`], so that requests the
/// HTTP codec refuses get the envelope (or the error page) too.
pub fn bind(
    state: AppState,
    interface: Interface,
    bind: &str,
    metrics_bind: Option<SocketAddr>,
) -> anyhow::Result<Bound> {
    use actix_service::{ServiceFactoryExt as _, fn_service, map_config};
    use actix_web::dev::AppConfig;
    let data = web::Data::new(state);
    let configure = routes(interface);
    let pages = interface == Interface::Platform;
    // Handlers do their database work (and statement parsing) on each
    // worker's blocking pool. Unbounded (tokio's 512), the pool grew a thread
    // for every peak of concurrent requests, each thread took a glibc malloc
    // arena of its own, and RSS crept up for as long as the soak ran. More
    // blocking threads than pooled connections would only wait for one.
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(512); // actix-server refuses more
    let blocking_threads = usize::try_from(data.db.max_connections())
        .unwrap_or(usize::MAX)
        .div_ceil(workers)
        .max(1);
    let mut builder = actix_server::Server::build()
        .workers(workers)
        .worker_max_blocking_threads(blocking_threads)
        .shutdown_timeout(10)
        // `run` installs its own SIGINT/SIGTERM handling, before it says it
        // listens; actix's would only be in place once the server is polled.
        .disable_signals();
    let mut addrs = Vec::new();
    let listeners: Vec<std::net::TcpListener> = bind
        .to_socket_addrs_all()
        .with_context(|| format!("binding {bind} (TRIBUTARY_BIND)"))?;
    for listener in listeners {
        let addr = listener.local_addr()?;
        addrs.push(addr);
        let (data, configure) = (data.clone(), configure.clone());
        builder = builder
            .listen(format!("tributary-{addr}"), listener, move || {
                let app = App::new()
                    .app_data(data.clone())
                    .configure(configure.clone())
                    .default_service(web::to(error::no_route))
                    .wrap(from_fn(control_characters::refuse))
                    .wrap(from_fn(move |req, next| {
                        crate::web::surface::navigate(interface, req, next)
                    }))
                    .wrap(from_fn(error::envelope_framework_errors))
                    .wrap(from_fn(request_id::middleware))
                    .wrap(access_log::logger())
                    .wrap(from_fn(metrics::serve::record));
                let http = actix_http::HttpService::build()
                    .local_addr(addr)
                    // The app's fallback host when a request names none: HTTP/1.1
                    // requests name one, and links use TRIBUTARY_PUBLIC_URL.
                    .finish(map_config(app, |_| AppConfig::default()));
                fn_service(move |io: actix_rt::net::TcpStream| {
                    let peer = io.peer_addr().ok();
                    let io = malformed::Answering::new(io, pages);
                    std::future::ready(Ok::<_, actix_http::error::DispatchError>((
                        io,
                        actix_http::Protocol::Http1,
                        peer,
                    )))
                })
                .and_then(http)
            })
            .with_context(|| format!("binding {bind} (TRIBUTARY_BIND)"))?;
    }
    let mut metrics_addr = None;
    if let Some(wanted) = metrics_bind {
        // `/metrics` alone, without a token: the configuration only accepts
        // a loopback address here.
        let listener = std::net::TcpListener::bind(wanted)
            .with_context(|| format!("binding {wanted} (TRIBUTARY_METRICS_BIND)"))?;
        metrics_addr = Some(listener.local_addr()?);
        let data = data.clone();
        builder = builder
            .listen("tributary-metrics", listener, move || {
                let app = App::new()
                    .app_data(data.clone())
                    .service(route::get("/metrics", metrics::serve::scrape))
                    .default_service(web::to(error::no_route));
                actix_http::HttpService::build()
                    .finish(map_config(app, |_| AppConfig::default()))
                    .tcp()
            })
            .with_context(|| format!("binding {wanted} (TRIBUTARY_METRICS_BIND)"))?;
    }
    Ok(Bound {
        server: builder.run(),
        addrs,
        metrics_addr,
    })
}

/// What [`bind`] listens on.
#[allow(missing_debug_implementations)] // actix's Server is not Debug
pub struct Bound {
    pub server: actix_web::dev::Server,
    /// The main addresses (the real port when asked for port 0).
    pub addrs: Vec<SocketAddr>,
    /// The loopback address serving `/metrics` without a token, if any.
    pub metrics_addr: Option<SocketAddr>,
}

/// `TcpListener`s for every address `bind` resolves to.
trait BindAll {
    fn to_socket_addrs_all(&self) -> std::io::Result<Vec<std::net::TcpListener>>;
}

impl BindAll for &str {
    fn to_socket_addrs_all(&self) -> std::io::Result<Vec<std::net::TcpListener>> {
        use std::net::ToSocketAddrs as _;
        self.to_socket_addrs()?
            .map(std::net::TcpListener::bind)
            .collect()
    }
}

/// Why a server reachable from other machines should know its public
/// address: without `TRIBUTARY_PUBLIC_URL`, the links it hands out and its
/// OAuth metadata are read from each request's Host header (and so cannot
/// be cached), which is only right on a machine of one's own.
/// docs/operations.md, "Public address".
fn public_url_warning(public_url: Option<&str>, addrs: &[SocketAddr]) -> Option<String> {
    let exposed: Vec<String> = addrs
        .iter()
        .filter(|addr| !addr.ip().is_loopback())
        .map(ToString::to_string)
        .collect();
    (public_url.is_none() && !exposed.is_empty()).then(|| {
        format!(
            "TRIBUTARY_PUBLIC_URL is not set and this server listens on {} beyond loopback: links, return addresses and the OAuth metadata are built from each request's Host header, and the metadata may not be cached. Set TRIBUTARY_PUBLIC_URL to the address users reach it at.",
            exposed.join(", ")
        )
    })
}

/// The address a user on this machine would type: an unspecified bind
/// address (0.0.0.0, ::) becomes loopback.
pub fn local_url(addr: SocketAddr) -> String {
    let ip = if addr.ip().is_unspecified() {
        match addr {
            SocketAddr::V4(_) => "127.0.0.1".to_owned(),
            SocketAddr::V6(_) => "[::1]".to_owned(),
        }
    } else if addr.is_ipv6() {
        format!("[{}]", addr.ip())
    } else {
        addr.ip().to_string()
    };
    format!("http://{ip}:{}", addr.port())
}

/// A server that [`start`] bound: it serves once awaited (or spawned).
#[allow(missing_debug_implementations)] // actix's Server is not Debug
pub struct Started {
    pub server: actix_web::dev::Server,
    /// The addresses it listens on (the real port when asked for port 0).
    pub addrs: Vec<SocketAddr>,
    /// The loopback address serving `/metrics` without a token, if any.
    pub metrics_addr: Option<SocketAddr>,
    /// What the binary prints on stdout once it listens: the address, and on
    /// a first start the demo key (the one time it exists in plain text, so
    /// stdout and never the log) and what to try next.
    pub greeting: Vec<String>,
    worker: Option<BackgroundWorker>,
}

impl Started {
    /// Stops the embedded worker (if any) off the async runtime, after the
    /// server has stopped.
    pub async fn stop_worker(&mut self) -> anyhow::Result<()> {
        if let Some(worker) = self.worker.take() {
            web::block(move || drop(worker))
                .await
                .context("stopping the embedded worker")?;
        }
        Ok(())
    }
}

/// What an [`Application`] is built from besides its configuration. The
/// binaries take the defaults; the end-to-end tests bring what they must
/// control (a clock they move, a database they seeded, the connectors they
/// fake, the outbox whose sign-in codes they read).
#[derive(Default)]
#[allow(missing_debug_implementations)] // mailers and processors are not all Debug
pub struct Parts {
    /// Default: the system clock.
    pub clock: Option<Arc<dyn Clock>>,
    /// An open, migrated database. Default: opened from the configuration.
    pub database: Option<Database>,
    /// Default: every connector the configuration enables.
    pub registry: Option<Registry>,
    /// Default: SMTP when configured, else the development outbox.
    pub mailer: Option<Arc<dyn Mailer>>,
    /// Default: the configured processor, if any.
    pub payments: Option<Arc<dyn PaymentProcessor>>,
    /// The guard webhook registrations are checked with. Default: the
    /// configured one, resolving with the system's resolver.
    pub outbound: Option<Guard>,
}

/// One interface's server, assembled: the database open, the demo seeded
/// (Personal, when configured), the embedded worker running (when
/// configured), the state every handler shares. The binaries, the docs test
/// and the end-to-end tests all start through this.
#[allow(missing_debug_implementations)] // holds the state's trait objects
pub struct Application {
    interface: Interface,
    config: Config,
    state: AppState,
    seed: Option<demo::DemoSeed>,
    worker: Option<BackgroundWorker>,
}

impl Application {
    /// Builds the application. Blocking (it opens the database and may make
    /// blocking HTTP clients): call it off the async runtime, as [`start`]
    /// does, unless `parts` bring a registry without such clients.
    pub fn build(interface: Interface, config: Config, parts: Parts) -> anyhow::Result<Self> {
        let clock = parts.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let db = match parts.database {
            Some(db) => db,
            None => open_database(&config)?,
        };
        let engine = match parts.registry {
            Some(registry) => engine_over(&config, &db, clock.clone(), registry)?,
            None => sync_engine(&config, &db, clock.clone())?,
        };
        // The browser pages (the Platform's flow and portal, the Personal
        // dashboard) connect banks with their own clone.
        let pages_engine = engine.clone();
        let seed = if interface == Interface::Personal && config.seed_demo {
            demo::seed_if_empty(&db, &engine, clock.as_ref())?
        } else {
            None
        };
        let sealer: Arc<dyn tributary_domain::secrets::Sealer> = Arc::new(config.keyring()?);
        // Mail: sign-in codes from the browser pages of both interfaces, and
        // notices from the embedded worker.
        let mailer = match parts.mailer {
            Some(mailer) => mailer,
            None => mailer(&config)?,
        };
        let worker = if config.embedded_worker {
            Some(
                BackgroundWorker::start(
                    engine,
                    worker_chore(&config, &db, clock.clone(), mailer.clone())?,
                    config.worker_poll,
                    interface.binary(),
                    embedded_concurrency(config.worker_concurrency, config.pool.max_size),
                )
                .context("starting the embedded worker")?,
            )
        } else {
            None
        };
        let mut state = AppState::new(db.clone(), clock, config.public_url.clone())
            .with_metrics(&config.metrics);
        state.simplefin_daily_requests = config.simplefin_daily_requests;
        state.mcp_limit = crate::mcp::RequestLimit::per_minute(config.mcp_requests_per_minute);
        state.simplefin_max_window_days = config.simplefin_max_window_days;
        state.developer_signup = config.developer_signup;
        state.sealer = Some(sealer);
        state.outbound = parts.outbound.unwrap_or_else(|| config.outbound_guard());
        // Mail and bank connections serve the browser pages of both
        // interfaces; payments only the Platform's checkout.
        state = state.with_engine(pages_engine).with_mailer(mailer);
        state.behind_proxy = config.behind_proxy;
        if interface == Interface::Platform
            && let Some(payments) = parts.payments.or_else(|| payments(&config, &db))
        {
            state = state.with_payments(payments);
        }
        Ok(Self {
            interface,
            config,
            state,
            seed,
            worker,
        })
    }

    /// The state every handler shares.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Listens on the configured address; the server serves once awaited
    /// (or spawned).
    pub fn bind(self) -> anyhow::Result<Started> {
        let Self {
            interface,
            config,
            state,
            seed,
            worker,
        } = self;
        let (db, clock) = (state.db.clone(), state.clock.clone());
        let Bound {
            server,
            addrs,
            metrics_addr,
        } = bind(state, interface, &config.bind, config.metrics.bind)?;
        let url = addrs
            .first()
            .map(|addr| local_url(*addr))
            .unwrap_or_default();
        if let Some(warning) = public_url_warning(config.public_url.as_deref(), &addrs) {
            log::warn!("{warning}");
        }
        let mut greeting = vec![format!(
            "Tributary {} listening on {url} (database {})",
            interface.name(),
            config.database_url
        )];
        if let Some(seed) = seed {
            greeting.push(format!(
                "Created demo user {} with {} synced sandbox accounts.",
                seed.email, seed.accounts
            ));
            greeting.push(format!("Demo API key (shown only now): {}", seed.api_key));
            greeting.push(format!(
                "Try: curl -H 'x-api-key: {}' {url}/api/v1/accounts",
                seed.api_key
            ));
            let base = config.public_url.as_deref().unwrap_or(&url);
            greeting.push(format!(
                "Dashboard (this sign-in link works once, for 15 minutes): {base}{}/{}",
                SIGN_IN_LINK_PATH, seed.sign_in_token
            ));
        }
        // The Platform's demo app needs the address the server answers at
        // (its redirect URI is this server's demo callback page): made
        // here, once bound.
        if interface == Interface::Platform && config.seed_demo {
            let base = config.public_url.as_deref().unwrap_or(&url);
            if let Some(app) = demo::seed_demo_app_if_empty(&db, clock.as_ref(), base)? {
                greeting.push(format!(
                    "Created the demo app \"{}\" (confidential, users paid by the integrator).",
                    app.name
                ));
                greeting.push(format!("client_id:     {}", app.client_id));
                greeting.push(format!(
                    "client_secret: {} (shown only now; only its hash is kept)",
                    app.client_secret
                ));
                greeting.push(format!(
                    "Try the whole flow in a browser (sign-in codes go to the log while no SMTP server is set): {}",
                    app.authorize_link
                ));
            }
        }
        if interface == Interface::Platform {
            let base = config.public_url.as_deref().unwrap_or(&url);
            greeting.push(match config.developer_signup {
                Signup::Open => format!(
                    "Developer dashboard (anyone may sign up): {base}{}",
                    DEVELOPERS_ROOT
                ),
                Signup::Closed => format!(
                    "Developer dashboard: {base}{} (sign-up is closed: add developers with `tributary developers add EMAIL`)",
                    DEVELOPERS_ROOT
                ),
            });
        }
        if interface == Interface::Personal && !config.seed_demo {
            greeting.push("No demo data (TRIBUTARY_DEMO is off). Next: tributary users create you@example.com, then tributary keys create --user you@example.com --name my-app".into());
        }
        if let Some(addr) = metrics_addr {
            greeting.push(format!("Prometheus metrics on {}/metrics", local_url(addr)));
        }
        if worker.is_none() {
            greeting.push("No sync worker runs in this server (TRIBUTARY_EMBEDDED_WORKER is off): syncs stay queued until `tributary worker` runs.".into());
        }
        Ok(Started {
            server,
            addrs,
            metrics_addr,
            greeting,
            worker,
        })
    }
}

/// Everything a binary does before serving: [`Application::build`] off the
/// async runtime (the engine holds blocking HTTP clients, which then move to
/// the worker thread or are dropped there), then bind.
pub async fn start(interface: Interface, config: Config) -> anyhow::Result<Started> {
    web::block(move || Application::build(interface, config, Parts::default()))
        .await??
        .bind()
}

/// Everything a binary does: [`start`], print the greeting, and serve until
/// SIGINT/SIGTERM.
pub async fn run(interface: Interface, config: Config) -> anyhow::Result<()> {
    let mut started = start(interface, config).await?;
    let shutdown = shutdown_on_signal(started.server.handle())?;
    for line in &started.greeting {
        println!("{line}");
    }
    let (served, ()) = tokio::join!(&mut started.server, shutdown);
    started.stop_worker().await?;
    served.context("serving HTTP")?;
    log::info!("{} stopped", interface.name());
    Ok(())
}

/// Registers SIGINT and SIGTERM handlers now, and returns a future that, on
/// either signal, stops accepting connections and lets in-flight requests
/// finish (up to the shutdown timeout). It also ends when the server stops
/// by itself.
fn shutdown_on_signal(
    handle: actix_web::dev::ServerHandle,
) -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut terminate =
        signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => log::info!("SIGINT received: shutting down gracefully"),
            _ = terminate.recv() => log::info!("SIGTERM received: shutting down gracefully"),
        }
        handle.stop(true).await;
    })
}

/// The whole `main` of a server binary: `--help`/`--version`, logging,
/// configuration from the environment, serving, and the exit code.
pub async fn main(interface: Interface) -> std::process::ExitCode {
    clap::Command::new(interface.binary())
        .version(env!("CARGO_PKG_VERSION"))
        .about(interface.about())
        .after_help(tributary_app::config::environment_help())
        .get_matches();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let outcome = match Config::from_env() {
        Ok(config) => run(interface, config).await,
        Err(err) => Err(err.into()),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}: {err:#}", interface.binary());
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unset_public_url_is_warned_of_only_beyond_loopback() {
        let addr = |text: &str| text.parse::<SocketAddr>().unwrap();
        let loopback = [addr("127.0.0.1:8080"), addr("[::1]:8080")];
        assert_eq!(public_url_warning(None, &loopback), None);
        let everywhere = [addr("0.0.0.0:8080")];
        let warning = public_url_warning(None, &everywhere).expect("a warning");
        assert!(warning.contains("0.0.0.0:8080"), "{warning}");
        assert!(warning.contains("TRIBUTARY_PUBLIC_URL"), "{warning}");
        assert_eq!(
            public_url_warning(Some("https://money.example"), &everywhere),
            None
        );
        assert!(public_url_warning(None, &[addr("192.0.2.4:80")]).is_some());
    }
}
