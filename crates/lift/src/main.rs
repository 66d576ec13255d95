//! The `lift` binary: the command line of crate `lift_cli`, here so that `cargo run` at the
//! workspace root and `cargo test -p lift` (whose tests run it) find it in package `lift`.

fn main() -> std::process::ExitCode {
    lift_cli::main()
}
