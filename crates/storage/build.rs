// `embed_migrations!` does not notice edited migration files on its own.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
