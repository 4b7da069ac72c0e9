//! `tributary`: the admin command line (see the library for what it does).

fn main() -> std::process::ExitCode {
    tributary::main()
}
