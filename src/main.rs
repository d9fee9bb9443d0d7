fn main() -> std::process::ExitCode {
    railyard::cli::main()
}
