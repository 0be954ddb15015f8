//! Write a synthetic Markdown folder for a manual `sidenote import` check:
//!
//! ```sh
//! cargo run --release -p sidenote-store --example gen_corpus -- /tmp/corpus-10k 10000
//! sidenote --workspace /tmp/ws import /tmp/corpus-10k
//! ```

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), n) = (args.next(), args.next()) else {
        eprintln!("usage: gen_corpus DIR [N=10000] [SEED=42]");
        return std::process::ExitCode::FAILURE;
    };
    let n: usize = n.and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(42);
    match sidenote_store::corpus::write_markdown(std::path::Path::new(&dir), n, seed) {
        Ok(()) => {
            println!("wrote {n} notes to {dir}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
