//! `qsim completions`: shell completion scripts generated from the clap
//! definition, so they never drift from the real options. The values of
//! the options that take a key path (`--set`, `--vary`, `--change`, `--at`,
//! `--load-axis`, ...: their value name starts with `PATH`) are completed
//! from the model on the command line by the hidden `qsim complete-keys`,
//! which the scripts call back.

use anyhow::{Context, Result};
use clap::Args;
use clap_complete::Shell;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `qsim completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of the hidden `qsim complete-keys`, which the completion
/// scripts call.
#[derive(Args, Debug)]
pub struct CompleteKeysArgs {
    /// The model file whose key paths to list.
    pub model: PathBuf,
    /// List only the paths that start with this.
    #[arg(default_value = "")]
    pub prefix: String,
}

/// Prints the key paths of `args.model` that start with `args.prefix`, one
/// a line (see [`qsim_model::key_paths`]).
pub fn complete_keys(args: &CompleteKeysArgs) -> Result<ExitCode> {
    let text = qsim_model::read_model_text(&args.model).map_err(anyhow::Error::msg)?;
    let mut out = std::io::stdout().lock();
    for p in qsim_model::key_paths(&text, &args.prefix) {
        writeln!(out, "{p}").context("writing key paths to standard output")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the completion script for `args.shell` to standard output.
pub fn completions(args: &CompletionsArgs, mut cli: clap::Command) -> Result<ExitCode> {
    let name = cli.get_name().to_string();
    // Generated into memory first: `clap_complete` panics when its writer
    // fails, and a closed pipe (`| head -c 1`, exit 0) or a full disk
    // (exit 1) must end as `report_error` says, not with a panic.
    let mut script = Vec::new();
    cli.build();
    clap_complete::generate(args.shell, &mut cli, &name, &mut script);
    let script = String::from_utf8(script).context("the generated completion script")?;
    let script = complete_key_paths(args.shell, &cli, &name, script);
    let mut out = std::io::stdout().lock();
    out.write_all(script.as_bytes())
        .and_then(|()| out.flush())
        .context("writing the completion script to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The long options of each subcommand whose value is a key path.
fn key_path_options(cli: &clap::Command) -> Vec<(String, Vec<String>)> {
    cli.get_subcommands()
        .map(|sub| {
            let longs = sub
                .get_arguments()
                .filter(|a| {
                    a.get_value_names()
                        .is_some_and(|v| v.iter().any(|n| n.as_str().starts_with("PATH")))
                })
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect();
            (sub.get_name().to_string(), longs)
        })
        .filter(|(_, longs): &(String, Vec<String>)| !longs.is_empty())
        .collect()
}

/// Bash: the first word ending in `.toml` is the model; each path offered
/// ends in `=`, with no space after it, ready for the value.
const BASH_HELPER: &str = r#"
_qsim_key_paths() {
    local w model=""
    for w in "${COMP_WORDS[@]:2}"; do
        case "$w" in *.toml) model="$w"; break ;; esac
    done
    COMPREPLY=()
    [[ -n "$model" ]] || return 0
    while IFS= read -r w; do
        COMPREPLY+=("$w=")
    done < <("${COMP_WORDS[0]}" complete-keys -- "$model" "$cur" 2>/dev/null)
    compopt -o nospace 2>/dev/null
    return 0
}
"#;

const ZSH_HELPER: &str = r#"
(( $+functions[_qsim_key_paths] )) ||
_qsim_key_paths() {
    local w model
    for w in "${words[@]:2}"; do
        if [[ "$w" == *.toml ]]; then model="$w"; break; fi
    done
    [[ -n "$model" ]] || return 1
    local -a keys
    keys=(${(f)"$("${words[1]}" complete-keys -- "$model" "$PREFIX" 2>/dev/null)"})
    compadd -Q -S '=' -- $keys
}
"#;

const FISH_HELPER: &str = r#"
function __qsim_key_paths
    set -l words (commandline -opc)
    set -l model
    for w in $words[3..-1]
        if string match -q -- '*.toml' $w
            set model $w
            break
        end
    end
    test -n "$model"; or return
    $words[1] complete-keys -- $model (commandline -ct) 2>/dev/null | string replace -r '$' '='
end
"#;

/// Makes the generated script complete key paths from the model for the
/// options of [`key_path_options`] (bash, zsh and fish; the other shells
/// keep clap's plain completion).
fn complete_key_paths(shell: Shell, cli: &clap::Command, name: &str, script: String) -> String {
    let options = key_path_options(cli);
    match shell {
        Shell::Bash => {
            // One `case` arm per subcommand, `qsim__subcmd__run)`; in it, each
            // option's arm completes file names.
            let mut out = String::with_capacity(script.len() + BASH_HELPER.len());
            let mut current: Option<&Vec<String>> = None;
            let mut lines = script.lines().peekable();
            while let Some(line) = lines.next() {
                let t = line.trim();
                if let Some(sub) = t
                    .strip_prefix(&format!("{name}__subcmd__"))
                    .and_then(|s| s.strip_suffix(')'))
                {
                    current = options.iter().find(|(n, _)| n == sub).map(|(_, l)| l);
                }
                out.push_str(line);
                out.push('\n');
                let is_key_option = t
                    .strip_prefix("--")
                    .and_then(|s| s.strip_suffix(')'))
                    .is_some_and(|o| current.is_some_and(|l| l.iter().any(|x| x == o)));
                if is_key_option
                    && let Some(next) = lines.peek()
                    && next.trim() == r#"COMPREPLY=($(compgen -f "${cur}"))"#
                {
                    let indent = &next[..next.len() - next.trim_start().len()];
                    out.push_str(&format!("{indent}_qsim_key_paths\n"));
                    lines.next();
                }
            }
            out + BASH_HELPER
        }
        Shell::Zsh => {
            // An option's spec ends in `:VALUE-NAME:_default'`.
            let mut s = script;
            for v in ["PATH=VALUE", "PATH=SPEC", "PATH=LO..HI", "PATH"] {
                s = s.replace(
                    &format!(":{v}:_default'"),
                    &format!(":{v}:_qsim_key_paths'"),
                );
            }
            let tail = format!("if [ \"$funcstack[1]\" = \"_{name}\" ]; then");
            match s.find(&tail) {
                Some(at) => format!("{}{ZSH_HELPER}\n{}", &s[..at], &s[at..]),
                None => s + ZSH_HELPER,
            }
        }
        Shell::Fish => {
            let mut out = String::from(FISH_HELPER);
            for line in script.lines() {
                out.push_str(line);
                let key = options.iter().any(|(sub, longs)| {
                    line.contains(&format!("__fish_{name}_using_subcommand {sub}\""))
                        && longs.iter().any(|l| line.contains(&format!(" -l {l} ")))
                });
                if key && line.ends_with(" -r") {
                    out.push_str(" -f -a \"(__qsim_key_paths)\"");
                }
                out.push('\n');
            }
            out
        }
        _ => script,
    }
}
