//! `sidenote search QUERY`: Joplin query syntax (`tag:x`, `notebook:"A B"`, `-word`, …).

use crate::app::{App, print_json, show_time};

#[derive(clap::Args)]
pub struct Args {
    /// The query, e.g. `meeting notes`, `tag:idea -tag:archived`, `type:todo due:day+7`.
    /// Several words are joined with spaces; negations like `-tag:x` need no `--`.
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true, value_name = "QUERY")]
    pub query: Vec<String>,
    /// Print results as JSON (`{"results":[{id,title,notebook_id,updated_time,snippet}],"total"}`).
    #[arg(long)]
    pub json: bool,
    /// Maximum number of results.
    #[arg(long, short = 'n', default_value_t = 20)]
    pub limit: usize,
}

/// The query words, with `--json` / `--limit N` / `-n N` that came after the query taken
/// out (the query accepts hyphen values, so clap hands them over as words). After `--`
/// everything is query.
fn split_trailing_options(args: &mut Args) -> anyhow::Result<String> {
    let mut words = Vec::new();
    let mut it = std::mem::take(&mut args.query).into_iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--" => {
                words.extend(it.by_ref());
                break;
            }
            "--json" => args.json = true,
            "--limit" | "-n" => {
                let v = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("{w} needs a number"))?;
                args.limit = v
                    .parse()
                    .map_err(|_| anyhow::anyhow!("bad value '{v}' for {w}: expected a number"))?;
            }
            _ => match w.strip_prefix("--limit=") {
                Some(v) => {
                    args.limit = v.parse().map_err(|_| {
                        anyhow::anyhow!("bad value '{v}' for --limit: expected a number")
                    })?;
                }
                None => words.push(w),
            },
        }
    }
    Ok(words.join(" "))
}

pub async fn run(app: &App, mut args: Args) -> anyhow::Result<()> {
    let query = split_trailing_options(&mut args)?;
    if args.limit == 0 {
        anyhow::bail!("--limit must be at least 1");
    }
    let r = app.store.search(&query, args.limit)?;
    if args.json {
        return print_json(&r);
    }
    if r.results.is_empty() {
        crate::out!("no notes match");
        return Ok(());
    }
    for h in &r.results {
        let title = if h.title.is_empty() {
            "(untitled)"
        } else {
            &h.title
        };
        crate::out!("{}  {}  {}", h.id, show_time(h.updated_time), title);
        if !h.snippet.is_empty() {
            crate::out!("    {}", h.snippet);
        }
    }
    if r.total > r.results.len() {
        crate::out!(
            "({} of {} matches; use --limit to see more)",
            r.results.len(),
            r.total
        );
    }
    Ok(())
}
