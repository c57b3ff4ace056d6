//! The built-in `sh -c SCRIPT [NAME [ARG...]]`'s language: simple commands
//! joined by `;`, newlines, `&&` and `||`, with POSIX quoting ('...',
//! "...", `\`), parameters (`$0`-`$9`, `${N}`, `$@`, `$*`, `$#`, `$?`,
//! `$$`, `$NAME`, `${NAME}`), field splitting of unquoted expansions,
//! comments, and the redirections between stdout and stderr (`>&2`,
//! `1>&2`, `2>&1`). Everything else a shell reads (pipes, redirections to
//! files, `&`, `if`, `for`, subshells, command substitution, globs, `~`,
//! assignments) is refused as the script is parsed, with the construct
//! named.
//!
//! This file reads and expands; which commands run, and how, is the
//! built-in programs' (`builtin.rs`), which walk the script with a
//! [`Cursor`].

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
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

/// A simple command: its words (at least one), and its redirections.
#[derive(Debug)]
pub(crate) struct Command {
    words: Vec<Word>,
    /// `N>&M`, in order: output descriptor N (1 or 2) writes where M
    /// (1 or 2) does at that point.
    redirects: Vec<(u8, u8)>,
}

impl Command {
    /// The command's redirections, applied left to right: `(from, to)`
    /// for `from>&to`, each 1 (stdout) or 2 (stderr).
    pub(crate) fn redirects(&self) -> &[(u8, u8)] {
        &self.redirects
    }
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
pub(crate) fn refuse(what: &str) -> String {
    format!(
        "sh -c: {what} (the built-in sh runs simple commands of the built-in programs, joined \
         by ;, && and ||)"
    )
}

impl Script {
    /// `sh -c SCRIPT [NAME [ARG...]]`, with these arguments (after
    /// `argv[0]`, which is `$0` when no NAME is given), environment and
    /// process id (`$$`).
    pub(crate) fn parse(
        args: &[OsString],
        arg0: &OsStr,
        env: &BTreeMap<OsString, OsString>,
        pid: u32,
    ) -> Result<Script, String> {
        let (script, operands) = match args.split_first() {
            Some((flag, rest)) if flag == "-c" => match rest.split_first() {
                Some((script, operands)) => (script, operands),
                None => return Err("sh -c without a script".to_string()),
            },
            _ => {
                return Err(format!(
                    "sh {args:?}: the built-in sh runs `sh -c SCRIPT [NAME [ARG...]]` only"
                ))
            }
        };
        let mut params: Vec<Vec<u8>> = Vec::new();
        match operands.split_first() {
            Some((name, args)) => {
                params.push(name.as_bytes().to_vec());
                params.extend(args.iter().map(|x| x.as_bytes().to_vec()));
            }
            None => params.push(arg0.as_bytes().to_vec()),
        }
        Ok(Script {
            params,
            env: env.clone(),
            pid,
            lists: Parser::new(script.as_bytes()).script()?,
        })
    }

    /// Every command of the script, in order.
    pub(crate) fn commands(&self) -> impl Iterator<Item = &Command> {
        self.lists
            .iter()
            .flat_map(|list| std::iter::once(&list.first).chain(list.rest.iter().map(|(_, c)| c)))
    }

    /// A walk through the script's commands as they run.
    pub(crate) fn cursor(&self) -> Cursor<'_> {
        Cursor {
            script: self,
            list: 0,
            next: 0,
        }
    }

    /// A command's fields after parameter expansion, field splitting of
    /// unquoted expansions and quote removal, with `$?` as `status`.
    pub(crate) fn expand(&self, command: &Command, status: i32) -> Vec<Vec<u8>> {
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

/// Where a run of a script is: which command runs next, given the status
/// of the one before (`&&` and `||` skip).
pub(crate) struct Cursor<'a> {
    script: &'a Script,
    /// The and-or list.
    list: usize,
    /// The command of that list (0: its first).
    next: usize,
}

impl<'a> Cursor<'a> {
    /// The next command to run after one that ended with `status` (0
    /// before the first), or `None` at the end. `a || b && c` is
    /// `(a || b) && c`: a skipped command keeps the status it was judged
    /// by.
    pub(crate) fn next(&mut self, status: i32) -> Option<&'a Command> {
        let lists = &self.script.lists;
        // Bounded by the script's commands: each turn passes one.
        while let Some(list) = lists.get(self.list) {
            let at = self.next;
            self.next += 1;
            if at == 0 {
                return Some(&list.first);
            }
            match list.rest.get(at - 1) {
                Some((and, command)) => {
                    if (*and && status == 0) || (!*and && status != 0) {
                        return Some(command);
                    }
                }
                None => {
                    self.list += 1;
                    self.next = 0;
                }
            }
        }
        None
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
        let mut redirects = Vec::new();
        // Where the last word ended: a `1` or `2` just before `>` is the
        // redirection's descriptor, not a word.
        let mut last_word_end = None;
        loop {
            self.blanks();
            match self.peek() {
                None | Some(b';' | b'\n') => break,
                Some(b'&') if self.peek2() == Some(b'&') => break,
                Some(b'|') if self.peek2() == Some(b'|') => break,
                Some(b'|') => return Err(refuse("a pipe |")),
                Some(b'&') => return Err(refuse("a background job &")),
                Some(b'>') => {
                    let from = match (last_word_end == Some(self.at), words.last()) {
                        (true, Some(word)) => match io_number(word) {
                            Some(n) => {
                                words.pop();
                                n
                            }
                            None => 1,
                        },
                        _ => 1,
                    };
                    redirects.push((from, self.redirect_target()?));
                }
                Some(b'<') => return Err(refuse("a redirection from a file <")),
                Some(b'(' | b')') => return Err(refuse("a subshell ( )")),
                Some(_) => {
                    let start = self.at;
                    let word = self.word()?;
                    if words.is_empty() {
                        Self::check_command_word(&self.src[start..self.at], &word)?;
                    }
                    words.push(word);
                    last_word_end = Some(self.at);
                }
            }
        }
        if words.is_empty() {
            return Err(refuse("an empty command"));
        }
        Ok(Command { words, redirects })
    }

    /// The target of a redirection, at its `>`: `&1` or `&2`.
    fn redirect_target(&mut self) -> Result<u8, String> {
        let rest = &self.src[self.at..];
        let target = match rest {
            [b'>', b'&', d @ (b'1' | b'2'), ..] => d - b'0',
            _ => return Err(refuse("a redirection to a file (only >&2, 1>&2 and 2>&1)")),
        };
        // The target ends there: `>&12` names another descriptor.
        if rest.get(3).is_some_and(|c| !b" \t\n;&|".contains(c)) {
            return Err(refuse("a redirection to another descriptor (only 1 and 2)"));
        }
        self.at += 3;
        Ok(target)
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

/// The descriptor a word names when it stands right before a `>`: an
/// unquoted `1` or `2`.
fn io_number(word: &Word) -> Option<u8> {
    match word.parts.as_slice() {
        [Part::Text(text, false)] if text.as_slice() == b"1" || text.as_slice() == b"2" => {
            Some(text[0] - b'0')
        }
        _ => None,
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
        Script::parse(&args, "sh".as_ref(), &env, 7)
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
    fn redirections_between_stdout_and_stderr() {
        let s = script(
            "echo a >&2; echo b 2>&1 1>&2; echo 2 >&1 x; echo c2>&1",
            &[],
        )
        .unwrap();
        let commands: Vec<&Command> = s.commands().collect();
        assert_eq!(commands[0].redirects(), [(1, 2)]);
        assert_eq!(commands[1].redirects(), [(2, 1), (1, 2)]);
        // A `2` apart from the `>` is a word.
        assert_eq!(commands[2].redirects(), [(1, 1)]);
        assert_eq!(s.expand(commands[2], 0).len(), 3);
        // `c2` is a word, not a descriptor.
        assert_eq!(commands[3].redirects(), [(1, 1)]);
        assert_eq!(s.expand(commands[3], 0), [b"echo".to_vec(), b"c2".to_vec()]);
    }

    /// The cursor runs `&&`'s right side after a success, `||`'s after a
    /// failure, and every list.
    #[test]
    fn the_cursor_follows_and_and_or() {
        let s = script("a && b || c; d\ne || f", &[]).unwrap();
        let walk = |statuses: &[i32]| {
            let mut cursor = s.cursor();
            let mut names = Vec::new();
            let mut status = 0;
            let mut results = statuses.iter();
            while let Some(command) = cursor.next(status) {
                names.push(String::from_utf8(s.expand(command, 0).remove(0)).unwrap());
                status = *results.next().unwrap_or(&0);
            }
            names
        };
        // a succeeds: b runs; b succeeds: c is skipped.
        assert_eq!(walk(&[0, 0, 0, 0]), ["a", "b", "d", "e"]);
        // a fails: b is skipped, c runs; e fails: f runs.
        assert_eq!(walk(&[1, 0, 0, 1, 0]), ["a", "c", "d", "e", "f"]);
        assert_eq!(s.commands().count(), 6);
    }

    #[test]
    fn what_it_does_not_read_is_refused_with_its_name() {
        for (src, what) in [
            ("echo a | cat", "a pipe"),
            ("sleep 1 &", "a background job"),
            ("echo a > f", "a redirection to a file"),
            ("cat < f", "a redirection from a file"),
            ("echo a >&3", "a redirection to a file"),
            ("echo a >&12", "another descriptor"),
            ("(exit 1)", "a subshell"),
            ("echo $(date)", "command substitution"),
            ("echo `date`", "command substitution"),
            ("echo *", "pathname pattern"),
            ("if true; then :; fi", "reserved word \"if\""),
            ("A=1 echo", "assignment"),
            ("echo ${A:-b}", "the expansion ${A:-b}"),
            ("echo 'a", "unterminated"),
        ] {
            let error = script(src, &[]).unwrap_err();
            assert!(error.contains(what), "{src:?}: {error}");
        }
        assert!(script("exit 2", &[]).is_ok());
        let error = Script::parse(
            &[OsString::from("script.sh")],
            "sh".as_ref(),
            &BTreeMap::new(),
            1,
        )
        .unwrap_err();
        assert!(error.contains("sh -c SCRIPT"), "{error}");
    }
}
