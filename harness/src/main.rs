use clap::Parser;

fn main() {
    let cli = serverbench::cli::Cli::parse();
    if let Err(e) = serverbench::run(cli) {
        eprintln!("serverbench: {e:#}");
        std::process::exit(serverbench::exit_code(&e));
    }
}
