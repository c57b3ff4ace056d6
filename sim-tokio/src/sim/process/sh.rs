//! The built-in `sh -c SCRIPT [NAME [ARG...]]`: simple commands joined by
//! `;`, newlines, `&&` and `||`, with POSIX quoting ('...', "...", `\`),
//! parameters (`$0`-`$9`, `${N}`, `$@`, `$*`, `$#`, `$?`, `$$`, `$NAME`,
//! `${NAME}`), field splitting of unquoted expansions, and comments. Its
//! commands are `exit`, `:`, and the other built-in programs (`true`,
//! `false`, `echo`, `cat`, `sleep`, `yes`).
//!
//! Everything else a shell does (pipes, redirections, `&`, `if`, `for`,
//! subshells, command substitution, globs, `~`, assignments, other
//! programs) is refused when the `Command` spawns, with the construct
//! named: register a program called `sh` to run such scripts.

use super::builtin::{self, Args, Exit, Program, Stdio};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// A parsed script and what its parameters expand to.
#[derive(Debug)]
pub(crate) struct Script {
    /// `$0`, then `$1`...
    params: Vec<Vec<u8>>,
    env: BTreeMap<OsString, OsString>,
    pid: u32,
    lists: Vec<AndOr>,
}

/// Commands joined by `&&` and `||`.
#[derive(Debug)]
struct AndOr {
    first: Command,
    rest: Vec<(bool, Command)>,
}

/// A simple command: its words (at least one).
#[derive(Debug)]
struct Command {
    words: Vec<Word>,
}

#[derive(Debug, Default)]
struct Word {
    parts: Vec<Part>,
}

#[derive(Debug)]
enum Part {
    /// Text, and whether it was quoted.
    Text(Vec<u8>, bool),
    /// A parameter, and whether it was in double quotes.
    Param(Param, bool),
}

#[derive(Debug, Clone)]
enum Param {
    Positional(usize),
    Var(Vec<u8>),
    /// `$@`.
    All,
    /// `$*`.
    Star,
    /// `$#`.
    Count,
    /// `$?`.
    Status,
    /// `$$`.
    Pid,
}

const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "{",
    "}", "!", "in", "function", "select",
];

/// Why the built-in refuses a script: the construct and what to do.
fn refuse(what: &str) -> String {
    format!(
        "sh -c: {what} (the built-in sh runs simple commands of the built-in programs, joined \
         by ;, && and ||)"
    )
}

impl Script {
    /// `sh -c SCRIPT [NAME [ARG...]]` from `a`'s arguments, checked.
    pub(crate) fn parse(a: &Args<'_>) -> Result<Script, String> {
        let (script, operands) = match a.args.split_first() {
            Some((flag, rest)) if flag == "-c" => match rest.split_first() {
                Some((script, operands)) => (script, operands),
                None => return Err("sh -c without a script".to_string()),
            },
            _ => {
                return Err(format!(
                    "sh {:?}: the built-in sh runs `sh -c SCRIPT [NAME [ARG...]]` only",
                    a.args
                ))
            }
        };
        let mut params: Vec<Vec<u8>> = Vec::new();
        match operands.split_first() {
            Some((name, args)) => {
                params.push(name.as_bytes().to_vec());
                params.extend(args.iter().map(|x| x.as_bytes().to_vec()));
            }
            None => params.push(a.arg0.as_bytes().to_vec()),
        }
        let script = Script {
            params,
            env: a.env.clone(),
            pid: a.pid,
            lists: Parser::new(script.as_bytes()).script()?,
        };
        script.check()?;
        Ok(script)
    }

    /// Every command names a command the built-in runs, with arguments it
    /// takes (expanded as they will be; `$?` is a number either way).
    fn check(&self) -> Result<(), String> {
        for list in &self.lists {
            for command in std::iter::once(&list.first).chain(list.rest.iter().map(|(_, c)| c)) {
                let fields = self.expand(command, 0);
                if let Some((name, args)) = fields.split_first() {
                    command_of(name, args)?;
                }
            }
        }
        Ok(())
    }

    /// Runs the script: its exit status, or the signal that ended it.
    pub(crate) async fn run(&self, io: &mut Stdio<'_>) -> Exit {
        let mut status = 0;
        for list in &self.lists {
            if let Some(exit) = self.run_command(&list.first, &mut status, io).await {
                return exit;
            }
            // `a || b && c` is `(a || b) && c`: a skipped command keeps
            // the status it would have been judged by.
            for (and, command) in &list.rest {
                if (*and && status != 0) || (!*and && status == 0) {
                    continue;
                }
                if let Some(exit) = self.run_command(command, &mut status, io).await {
                    return exit;
                }
            }
        }
        Exit::Code(status)
    }

    /// Runs one command, setting `status`: `Some` when the shell ends
    /// (`exit`, or its own `echo` killed by `SIGPIPE`).
    async fn run_command(
        &self,
        command: &Command,
        status: &mut i32,
        io: &mut Stdio<'_>,
    ) -> Option<Exit> {
        let fields = self.expand(command, *status);
        let Some((name, args)) = fields.split_first() else {
            *status = 0;
            return None;
        };
        match command_of(name, args).expect("sim: sh's commands were checked at spawn") {
            Builtin::Exit(code) => Some(Exit::Code(code.unwrap_or(*status) & 0xff)),
            Builtin::Program(program, in_shell) => match program.run(io).await {
                Exit::Code(code) => {
                    *status = code;
                    None
                }
                // A program's death is a status of 128 + its signal.
                Exit::Signal(sig) if !in_shell => {
                    *status = 128 + sig;
                    None
                }
                Exit::Signal(sig) => Some(Exit::Signal(sig)),
            },
        }
    }

    /// A command's fields after parameter expansion, field splitting of
    /// unquoted expansions and quote removal.
    fn expand(&self, command: &Command, status: i32) -> Vec<Vec<u8>> {
        let mut fields = Vec::new();
        for word in &command.words {
            let mut current: Option<Vec<u8>> = None;
            for part in &word.parts {
                match part {
                    Part::Text(text, _) => current.get_or_insert_with(Vec::new).extend(text),
                    Part::Param(Param::All, true) => {
                        for (i, param) in self.params.iter().skip(1).enumerate() {
                            if i > 0 {
                                fields.extend(current.take());
                            }
                            current.get_or_insert_with(Vec::new).extend(param);
                        }
                    }
                    Part::Param(param, true) => current
                        .get_or_insert_with(Vec::new)
                        .extend(self.value(param, status)),
                    Part::Param(param, false) => {
                        for c in self.value(param, status) {
                            if b" \t\n".contains(&c) {
                                fields.extend(current.take());
                            } else {
                                current.get_or_insert_with(Vec::new).push(c);
                            }
                        }
                    }
                }
            }
            fields.extend(current);
        }
        fields
    }

    fn value(&self, param: &Param, status: i32) -> Vec<u8> {
        match param {
            Param::Positional(n) => self.params.get(*n).cloned().unwrap_or_default(),
            Param::Var(name) => self
                .env
                .get(&OsString::from_vec(name.clone()))
                .map(|v| v.as_bytes().to_vec())
                .unwrap_or_default(),
            Param::All | Param::Star => self.params[1..].join(&b' '),
            Param::Count => (self.params.len() - 1).to_string().into_bytes(),
            Param::Status => status.to_string().into_bytes(),
            Param::Pid => self.pid.to_string().into_bytes(),
        }
    }
}

/// What a command runs.
enum Builtin {
    /// `exit [N]`.
    Exit(Option<i32>),
    /// A built-in program, and whether it runs in the shell itself (a
    /// shell's own `echo`, `true`, `false`, `:`).
    Program(Program, bool),
}

fn command_of(name: &[u8], args: &[Vec<u8>]) -> Result<Builtin, String> {
    let args: Vec<OsString> = args.iter().map(|a| OsString::from_vec(a.clone())).collect();
    let name = String::from_utf8_lossy(name).into_owned();
    match name.as_str() {
        "exit" => match args.as_slice() {
            [] => Ok(Builtin::Exit(None)),
            [code] => code
                .to_str()
                .and_then(|c| c.parse::<i64>().ok())
                .filter(|c| *c >= 0)
                .map(|c| Builtin::Exit(Some((c & 0xff) as i32)))
                .ok_or_else(|| refuse(&format!("exit {code:?}: not a number"))),
            _ => Err(refuse("exit with more than one argument")),
        },
        ":" | "true" => Ok(Builtin::Program(Program::True, true)),
        "false" => Ok(Builtin::Program(Program::False, true)),
        "echo" => Ok(Builtin::Program(Program::Echo(builtin::echo(&args)?), true)),
        "cat" | "sleep" | "yes" => {
            let env = BTreeMap::new();
            let a = Args {
                program: name.as_ref(),
                arg0: name.as_ref(),
                args: &args,
                pid: 0,
                env: &env,
            };
            Ok(Builtin::Program(builtin::parse_named(&name, &a)?, false))
        }
        "sh" => Err(refuse("a nested sh")),
        other => Err(refuse(&format!(
            "the command {other:?} (register a program called sh to run other programs)"
        ))),
    }
}

/// A recursive-descent reader of the script's bytes.
struct Parser<'a> {
    src: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a [u8]) -> Parser<'a> {
        Parser { src, at: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.at).copied()
    }

    fn peek2(&self) -> Option<u8> {
        self.src.get(self.at + 1).copied()
    }

    /// The and-or lists, separated by `;` and newlines.
    fn script(&mut self) -> Result<Vec<AndOr>, String> {
        let mut lists = Vec::new();
        // Bounded by the script's length: each turn consumes input.
        loop {
            self.blanks();
            match self.peek() {
                None => return Ok(lists),
                Some(b';') => {
                    if lists.is_empty() {
                        return Err(refuse("a ; before any command"));
                    }
                    self.at += 1;
                }
                Some(b'\n') => self.at += 1,
                Some(_) => lists.push(self.and_or()?),
            }
        }
    }

    fn and_or(&mut self) -> Result<AndOr, String> {
        let first = self.command()?;
        let mut rest = Vec::new();
        loop {
            self.blanks();
            let and = match (self.peek(), self.peek2()) {
                (Some(b'&'), Some(b'&')) => true,
                (Some(b'|'), Some(b'|')) => false,
                _ => return Ok(AndOr { first, rest }),
            };
            self.at += 2;
            // A newline may follow && and ||.
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n')) {
                self.at += 1;
            }
            rest.push((and, self.command()?));
        }
    }

    fn command(&mut self) -> Result<Command, String> {
        let mut words = Vec::new();
        loop {
            self.blanks();
            match self.peek() {
                None | Some(b';' | b'\n') => break,
                Some(b'&') if self.peek2() == Some(b'&') => break,
                Some(b'|') if self.peek2() == Some(b'|') => break,
                Some(b'|') => return Err(refuse("a pipe |")),
                Some(b'&') => return Err(refuse("a background job &")),
                Some(b'<' | b'>') => return Err(refuse("a redirection")),
                Some(b'(' | b')') => return Err(refuse("a subshell ( )")),
                Some(_) => {
                    let start = self.at;
                    let word = self.word()?;
                    if words.is_empty() {
                        Self::check_command_word(&self.src[start..self.at], &word)?;
                    }
                    words.push(word);
                }
            }
        }
        if words.is_empty() {
            return Err(refuse("an empty command"));
        }
        Ok(Command { words })
    }

    /// A command's first word is no reserved word and no assignment.
    fn check_command_word(raw: &[u8], word: &Word) -> Result<(), String> {
        let raw = String::from_utf8_lossy(raw);
        if RESERVED.contains(&raw.as_ref()) {
            return Err(refuse(&format!("the reserved word {raw:?}")));
        }
        if let Some(Part::Text(text, false)) = word.parts.first() {
            if let Some(eq) = text.iter().position(|&c| c == b'=') {
                let name = &text[..eq];
                if !name.is_empty() && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    return Err(refuse(&format!("the assignment {raw:?}")));
                }
            }
        }
        Ok(())
    }

    /// Blanks and a comment (from `#` to the end of the line).
    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
        if self.peek() == Some(b'#') {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.at += 1;
            }
        }
        // A backslash-newline is no character at all.
        if self.peek() == Some(b'\\') && self.peek2() == Some(b'\n') {
            self.at += 2;
            self.blanks();
        }
    }

    fn word(&mut self) -> Result<Word, String> {
        let mut word = Word::default();
        let start = self.at;
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => break,
                b'\'' => {
                    self.at += 1;
                    let end = self.src[self.at..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .ok_or_else(|| refuse("an unterminated '"))?;
                    let text = self.src[self.at..self.at + end].to_vec();
                    word.parts.push(Part::Text(text, true));
                    self.at += end + 1;
                }
                b'"' => {
                    self.at += 1;
                    self.double_quoted(&mut word)?;
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'\n') => self.at += 1,
                        Some(c) => {
                            word.parts.push(Part::Text(vec![c], true));
                            self.at += 1;
                        }
                        None => return Err(refuse("a \\ at the end of the script")),
                    }
                }
                b'$' => {
                    self.at += 1;
                    match self.param()? {
                        Some(param) => word.parts.push(Part::Param(param, false)),
                        None => push_text(&mut word, b'$', false),
                    }
                }
                b'`' => return Err(refuse("a command substitution `...`")),
                b'*' | b'?' | b'[' => {
                    return Err(refuse("a pathname pattern (*, ? or [)"));
                }
                b'~' if self.at == start => return Err(refuse("a tilde ~")),
                _ => {
                    push_text(&mut word, c, false);
                    self.at += 1;
                }
            }
        }
        Ok(word)
    }

    /// The inside of "...", after its opening quote.
    fn double_quoted(&mut self, word: &mut Word) -> Result<(), String> {
        // An empty "" still makes a field.
        word.parts.push(Part::Text(Vec::new(), true));
        loop {
            match self.peek() {
                None => return Err(refuse("an unterminated \"")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'\n') => self.at += 1,
                        Some(c @ (b'$' | b'`' | b'"' | b'\\')) => {
                            push_text(word, c, true);
                            self.at += 1;
                        }
                        _ => push_text(word, b'\\', true),
                    }
                }
                Some(b'$') => {
                    self.at += 1;
                    match self.param()? {
                        Some(param) => word.parts.push(Part::Param(param, true)),
                        None => push_text(word, b'$', true),
                    }
                }
                Some(b'`') => return Err(refuse("a command substitution `...`")),
                Some(c) => {
                    push_text(word, c, true);
                    self.at += 1;
                }
            }
        }
    }

    /// A parameter after its `$`, or `None` for a `$` that stays literal.
    fn param(&mut self) -> Result<Option<Param>, String> {
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let special = |c: u8| match c {
            b'@' => Some(Param::All),
            b'*' => Some(Param::Star),
            b'#' => Some(Param::Count),
            b'?' => Some(Param::Status),
            b'$' => Some(Param::Pid),
            c if c.is_ascii_digit() => Some(Param::Positional(usize::from(c - b'0'))),
            _ => None,
        };
        if let Some(param) = special(c) {
            self.at += 1;
            return Ok(Some(param));
        }
        match c {
            b'{' => {
                let end = self.src[self.at..]
                    .iter()
                    .position(|&c| c == b'}')
                    .ok_or_else(|| refuse("an unterminated ${"))?;
                let inside = &self.src[self.at + 1..self.at + end];
                self.at += end + 1;
                let param = match inside {
                    [c] if special(*c).is_some() => special(*c),
                    digits if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) => {
                        std::str::from_utf8(digits)
                            .ok()
                            .and_then(|d| d.parse().ok())
                            .map(Param::Positional)
                    }
                    name if is_name(name) => Some(Param::Var(name.to_vec())),
                    _ => None,
                };
                param.map(Some).ok_or_else(|| {
                    refuse(&format!(
                        "the expansion ${{{}}}",
                        String::from_utf8_lossy(inside)
                    ))
                })
            }
            b'(' => Err(refuse("a command substitution $(...)")),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let len = self.src[self.at..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .unwrap_or(self.src.len() - self.at);
                let name = self.src[self.at..self.at + len].to_vec();
                self.at += len;
                Ok(Some(Param::Var(name)))
            }
            b'!' | b'-' => Err(refuse(&format!("the parameter ${}", c as char))),
            _ => Ok(None),
        }
    }
}

fn is_name(s: &[u8]) -> bool {
    matches!(s.first(), Some(c) if c.is_ascii_alphabetic() || *c == b'_')
        && s.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Adds one byte of text to the word's last part when it is text of the
/// same quoting, else a new part.
fn push_text(word: &mut Word, c: u8, quoted: bool) {
    if let Some(Part::Text(text, q)) = word.parts.last_mut() {
        if *q == quoted {
            text.push(c);
            return;
        }
    }
    word.parts.push(Part::Text(vec![c], quoted));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(src: &str, operands: &[&str]) -> Result<Script, String> {
        let mut args = vec![OsString::from("-c"), OsString::from(src)];
        args.extend(operands.iter().map(OsString::from));
        let env = BTreeMap::from([(OsString::from("HOME"), OsString::from("/home/a b"))]);
        Script::parse(&Args {
            program: "sh".as_ref(),
            arg0: "sh".as_ref(),
            args: &args,
            pid: 7,
            env: &env,
        })
    }

    fn fields(src: &str, operands: &[&str]) -> Vec<String> {
        let s = script(src, operands).unwrap();
        s.expand(&s.lists[0].first, 3)
            .into_iter()
            .map(|f| String::from_utf8(f).unwrap())
            .collect()
    }

    #[test]
    fn quoting_parameters_and_field_splitting_as_posix_says() {
        assert_eq!(fields("echo $0", &[]), ["echo", "sh"]);
        assert_eq!(
            fields("echo $0 $2", &["name", "a", "b c"]),
            ["echo", "name", "b", "c"]
        );
        assert_eq!(fields("echo \"$2\"x", &["n", "a", "b c"]), ["echo", "b cx"]);
        assert_eq!(
            fields("echo \"$@\"", &["n", "a", "b c"]),
            ["echo", "a", "b c"]
        );
        assert_eq!(
            fields("echo \"$*\" $#", &["n", "a", "b"]),
            ["echo", "a b", "2"]
        );
        assert_eq!(
            fields("echo '$1' \\$1 \"\" $9", &["n", "x"]),
            ["echo", "$1", "$1", ""]
        );
        assert_eq!(
            fields("echo $HOME ${HOME}!", &[]),
            ["echo", "/home/a", "b", "/home/a", "b!"]
        );
        assert_eq!(
            fields("echo $? $$ ${1}", &["n", "one"]),
            ["echo", "3", "7", "one"]
        );
        assert_eq!(fields("echo a\\\nb # note", &[]), ["echo", "ab"]);
    }

    #[test]
    fn lists_and_their_operators() {
        let s = script("true && echo a || exit 3; false\nexit 2", &[]).unwrap();
        assert_eq!(s.lists.len(), 3);
        assert_eq!(s.lists[0].rest.len(), 2);
        assert!(s.lists[0].rest[0].0 && !s.lists[0].rest[1].0);
    }

    #[test]
    fn what_it_does_not_run_is_refused_with_its_name() {
        for (src, what) in [
            ("echo a | cat", "a pipe"),
            ("sleep 1 &", "a background job"),
            ("echo a > f", "a redirection"),
            ("(exit 1)", "a subshell"),
            ("echo $(date)", "command substitution"),
            ("echo `date`", "command substitution"),
            ("echo *", "pathname pattern"),
            ("if true; then :; fi", "reserved word \"if\""),
            ("A=1 echo", "assignment"),
            ("ls", "the command \"ls\""),
            ("exit x", "not a number"),
            ("echo ${A:-b}", "the expansion ${A:-b}"),
            ("echo 'a", "unterminated"),
            ("echo -e x", "-e"),
        ] {
            let error = script(src, &[]).unwrap_err();
            assert!(error.contains(what), "{src:?}: {error}");
        }
        assert!(script("exit 2", &[]).is_ok());
        assert!(Script::parse(&Args {
            program: "sh".as_ref(),
            arg0: "sh".as_ref(),
            args: &[OsString::from("script.sh")],
            pid: 1,
            env: &BTreeMap::new(),
        })
        .unwrap_err()
        .contains("sh -c SCRIPT"));
    }
}
