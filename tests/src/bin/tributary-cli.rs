//! The `tributary` command line, for the tests in this crate that run it
//! beside the servers (the docs examples, the webhook crash test).

fn main() -> std::process::ExitCode {
    tributary::main()
}
