//! `fake-provider [--script FILE] [--port PORT]`: serve the scripted fake AI provider on
//! 127.0.0.1, print its base URL (`http://127.0.0.1:PORT/v1`) on stdout, run until Ctrl-C.
//! The script is a JSON list of steps (see `sidenote_testkit::Step`); more can be appended
//! with `POST /_fake/script`. Recorded requests: `GET /_fake/requests`; violations:
//! `GET /_fake/violations`.

use sidenote_testkit::{FakeProvider, parse_script};
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: fake-provider [--script FILE] [--port PORT]");
    ExitCode::from(2)
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut script = None;
    let mut port: u16 = 0;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--script" => match args.next() {
                Some(f) => script = Some(f),
                None => return usage(),
            },
            "--port" => match args.next().and_then(|p| p.parse().ok()) {
                Some(p) => port = p,
                None => return usage(),
            },
            "-h" | "--help" => {
                let _ = usage();
                return ExitCode::SUCCESS;
            }
            _ => return usage(),
        }
    }
    let fake = match FakeProvider::start_on(SocketAddr::from(([127, 0, 0, 1], port))).await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fake-provider: cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = script {
        let steps = match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_script(&t).map_err(|e| e.to_string()))
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("fake-provider: cannot read script {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        fake.push_all(steps);
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", fake.base_url());
    let _ = out.flush();
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}
