//! Paths the servers serve and other processes link to: the CLI prints
//! sign-in links and SimpleFIN addresses, the servers' greetings print the
//! developer dashboard. One constant each, so a link never drifts from the
//! route it names.

/// The Personal dashboard's one-time sign-in link: `{base}{SIGN_IN_LINK_PATH}/{token}`.
pub const SIGN_IN_LINK_PATH: &str = "/sign-in/link";

/// The root of the SimpleFIN server both interfaces serve.
pub const SIMPLEFIN_ROOT: &str = "/simplefin";

/// The developer dashboard (the Platform interface).
pub const DEVELOPERS_ROOT: &str = "/developers";
