//! A lossless, untyped tree of RON text, for migrating old design files.
//!
//! `ron::Value` cannot carry a migration: it drops enum variant and struct names (`GpuNode(..)`
//! and `NvLink` lose their names), so a file that went through it no longer loads as a
//! `Design`. This tree keeps every name, and prints back to RON text that the typed loader
//! reads. It is only used for files older than the current version, so its speed matters little.

use std::fmt::Write as _;

/// One RON value with its names kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// `()`
    Unit,
    Bool(bool),
    /// Number text as written (`1`, `-2.5e3`, `0x1F`), so nothing is lost to rounding.
    Number(String),
    Str(String),
    Char(char),
    /// A bare name: a unit variant, `None`, `inf`, `NaN`.
    Ident(String),
    /// `Name(a, b)` or `(a, b)`; `Some(x)` is `Tuple(Some("Some"), [x])`.
    Tuple(Option<String>, Vec<Tree>),
    /// `Name(a: 1, b: 2)` or `(a: 1, b: 2)`.
    Struct(Option<String>, Vec<(String, Tree)>),
    List(Vec<Tree>),
    Map(Vec<(Tree, Tree)>),
}

/// A parsed file: its `#![...]` attribute lines and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub attributes: Vec<String>,
    pub value: Tree,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct TreeError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Deeper nesting than this is refused: the text is data from anyone, and the parser recurses.
pub const MAX_DEPTH: usize = 128;

impl Tree {
    /// The fields of a struct, if this is one.
    pub fn fields(&self) -> Option<&[(String, Tree)]> {
        match self {
            Tree::Struct(_, fields) => Some(fields),
            _ => None,
        }
    }

    pub fn field(&self, name: &str) -> Option<&Tree> {
        self.fields()?
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    pub fn field_mut(&mut self, name: &str) -> Option<&mut Tree> {
        match self {
            Tree::Struct(_, fields) => fields.iter_mut().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Renames a struct field in place; false when there is no such field.
    pub fn rename_field(&mut self, from: &str, to: &str) -> bool {
        match self {
            Tree::Struct(_, fields) => match fields.iter_mut().find(|(k, _)| k == from) {
                Some((k, _)) => {
                    *k = to.to_string();
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    pub fn remove_field(&mut self, name: &str) -> Option<Tree> {
        match self {
            Tree::Struct(_, fields) => {
                let i = fields.iter().position(|(k, _)| k == name)?;
                Some(fields.remove(i).1)
            }
            _ => None,
        }
    }

    /// Sets a struct field, replacing an existing one; false when this is not a struct.
    pub fn set_field(&mut self, name: &str, value: Tree) -> bool {
        match self {
            Tree::Struct(_, fields) => {
                match fields.iter_mut().find(|(k, _)| k == name) {
                    Some((_, v)) => *v = value,
                    None => fields.push((name.to_string(), value)),
                }
                true
            }
            _ => false,
        }
    }

    /// The elements of a list, if this is one.
    pub fn items_mut(&mut self) -> Option<&mut Vec<Tree>> {
        match self {
            Tree::List(items) => Some(items),
            _ => None,
        }
    }
}

/// Parses RON text into a tree.
pub fn parse(text: &str) -> Result<Document, TreeError> {
    let mut p = Parser {
        src: text,
        pos: 0,
        depth: 0,
    };
    let mut attributes = Vec::new();
    p.skip_ws()?;
    while p.rest().starts_with("#!") {
        let start = p.pos;
        let end = p
            .rest()
            .find(']')
            .ok_or_else(|| p.error("unclosed `#![`"))?;
        p.pos += end + 1;
        attributes.push(text[start..p.pos].to_string());
        p.skip_ws()?;
    }
    let value = p.value()?;
    p.skip_ws()?;
    if p.pos < text.len() {
        return Err(p.error("unexpected text after the value"));
    }
    Ok(Document { attributes, value })
}

/// Prints a document back to RON text (compact: it is read by the loader, not by people).
pub fn print(doc: &Document) -> String {
    let mut out = String::new();
    for a in &doc.attributes {
        out.push_str(a);
        out.push('\n');
    }
    print_tree(&doc.value, &mut out);
    out
}

fn print_tree(tree: &Tree, out: &mut String) {
    match tree {
        Tree::Unit => out.push_str("()"),
        Tree::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Tree::Number(n) => out.push_str(n),
        Tree::Str(s) => {
            out.push('"');
            for c in s.chars() {
                push_escaped(c, '"', out);
            }
            out.push('"');
        }
        Tree::Char(c) => {
            out.push('\'');
            push_escaped(*c, '\'', out);
            out.push('\'');
        }
        Tree::Ident(name) => out.push_str(name),
        Tree::Tuple(name, items) => {
            if let Some(name) = name {
                out.push_str(name);
            }
            out.push('(');
            for item in items {
                print_tree(item, out);
                out.push(',');
            }
            out.push(')');
        }
        Tree::Struct(name, fields) => {
            if let Some(name) = name {
                out.push_str(name);
            }
            out.push('(');
            for (k, v) in fields {
                out.push_str(k);
                out.push(':');
                print_tree(v, out);
                out.push(',');
            }
            out.push(')');
        }
        Tree::List(items) => {
            out.push('[');
            for item in items {
                print_tree(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Tree::Map(entries) => {
            out.push('{');
            for (k, v) in entries {
                print_tree(k, out);
                out.push(':');
                print_tree(v, out);
                out.push(',');
            }
            out.push('}');
        }
    }
}

fn push_escaped(c: char, quote: char, out: &mut String) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c if c.is_control() => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn error(&self, message: impl Into<String>) -> TreeError {
        let before = &self.src[..self.pos];
        TreeError {
            line: 1 + before.matches('\n').count(),
            column: 1 + before.chars().rev().take_while(|&c| c != '\n').count(),
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) -> Result<(), TreeError> {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if trimmed.starts_with("/*") {
                self.skip_block_comment()?;
            } else {
                return Ok(());
            }
        }
    }

    /// RON block comments nest.
    fn skip_block_comment(&mut self) -> Result<(), TreeError> {
        let start = self.pos;
        let mut level = 0usize;
        while self.pos < self.src.len() {
            let rest = self.rest();
            if rest.starts_with("/*") {
                level += 1;
                self.pos += 2;
            } else if rest.starts_with("*/") {
                level -= 1;
                self.pos += 2;
                if level == 0 {
                    return Ok(());
                }
            } else {
                self.pos += rest.chars().next().map_or(1, char::len_utf8);
            }
        }
        self.pos = start;
        Err(self.error("unclosed block comment"))
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), TreeError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}`")))
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        let rest = self.rest();
        let mut chars = rest.char_indices();
        match chars.next() {
            Some((_, c)) if c.is_alphabetic() || c == '_' => {}
            _ => return None,
        }
        let end = chars
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += end;
        Some(&rest[..end])
    }

    fn value(&mut self) -> Result<Tree, TreeError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let result = self.value_inner();
        self.depth -= 1;
        result
    }

    fn value_inner(&mut self) -> Result<Tree, TreeError> {
        self.skip_ws()?;
        let rest = self.rest();
        if rest.starts_with("b\"") || rest.starts_with("b'") || rest.starts_with("br") {
            return Err(self.error("byte strings are not used in design files"));
        }
        if rest.starts_with("r\"") || rest.starts_with("r#") {
            return self.raw_string();
        }
        match self.peek() {
            None => Err(self.error("unexpected end of file")),
            Some('(') => self.parens(None),
            Some('[') => self.list(),
            Some('{') => self.map(),
            Some('"') => self.string().map(Tree::Str),
            Some('\'') => self.char_literal(),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => {
                let name = self.ident().unwrap_or_default();
                let after_name = self.pos;
                self.skip_ws()?;
                if self.peek() == Some('(') {
                    return self.parens(Some(name.to_string()));
                }
                self.pos = after_name;
                Ok(match name {
                    "true" => Tree::Bool(true),
                    "false" => Tree::Bool(false),
                    _ => Tree::Ident(name.to_string()),
                })
            }
            Some(c) => Err(self.error(format!("unexpected character `{c}`"))),
        }
    }

    /// After an optional name: `()`, `(a, b)` or `(a: 1)`.
    fn parens(&mut self, name: Option<String>) -> Result<Tree, TreeError> {
        self.expect('(')?;
        self.skip_ws()?;
        if self.eat(')') {
            return Ok(match name {
                Some(name) => Tree::Tuple(Some(name), Vec::new()),
                None => Tree::Unit,
            });
        }
        if self.starts_field()? {
            let mut fields = Vec::new();
            loop {
                self.skip_ws()?;
                if self.eat(')') {
                    return Ok(Tree::Struct(name, fields));
                }
                let key = self
                    .ident()
                    .ok_or_else(|| self.error("expected a field name"))?
                    .to_string();
                self.skip_ws()?;
                self.expect(':')?;
                let value = self.value()?;
                fields.push((key, value));
                self.skip_ws()?;
                if !self.eat(',') {
                    self.skip_ws()?;
                    self.expect(')')?;
                    return Ok(Tree::Struct(name, fields));
                }
            }
        }
        let items = self.sequence(')')?;
        Ok(Tree::Tuple(name, items))
    }

    /// Whether the text ahead is `name:` (a struct field) rather than a value.
    fn starts_field(&mut self) -> Result<bool, TreeError> {
        let save = self.pos;
        let is_field = match self.ident() {
            Some(_) => {
                self.skip_ws()?;
                self.rest().starts_with(':') && !self.rest().starts_with("::")
            }
            None => false,
        };
        self.pos = save;
        Ok(is_field)
    }

    fn sequence(&mut self, close: char) -> Result<Vec<Tree>, TreeError> {
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            if self.eat(close) {
                return Ok(items);
            }
            items.push(self.value()?);
            self.skip_ws()?;
            if !self.eat(',') {
                self.skip_ws()?;
                self.expect(close)?;
                return Ok(items);
            }
        }
    }

    fn list(&mut self) -> Result<Tree, TreeError> {
        self.expect('[')?;
        self.sequence(']').map(Tree::List)
    }

    fn map(&mut self) -> Result<Tree, TreeError> {
        self.expect('{')?;
        let mut entries = Vec::new();
        loop {
            self.skip_ws()?;
            if self.eat('}') {
                return Ok(Tree::Map(entries));
            }
            let key = self.value()?;
            self.skip_ws()?;
            self.expect(':')?;
            let value = self.value()?;
            entries.push((key, value));
            self.skip_ws()?;
            if !self.eat(',') {
                self.skip_ws()?;
                self.expect('}')?;
                return Ok(Tree::Map(entries));
            }
        }
    }

    fn number(&mut self) -> Result<Tree, TreeError> {
        let start = self.pos;
        let rest = self.rest();
        let mut end = 0;
        let mut prev = ' ';
        for (i, c) in rest.char_indices() {
            let sign_ok = (c == '+' || c == '-') && (i == 0 || matches!(prev, 'e' | 'E'));
            if !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || sign_ok) {
                break;
            }
            end = i + c.len_utf8();
            prev = c;
        }
        self.pos += end;
        let text = &self.src[start..self.pos];
        if !text.chars().any(|c| c.is_ascii_digit())
            && !text.contains("inf")
            && !text.contains("NaN")
        {
            self.pos = start;
            return Err(self.error("expected a number"));
        }
        Ok(Tree::Number(text.to_string()))
    }

    fn escape(&mut self) -> Result<char, TreeError> {
        let c = self
            .peek()
            .ok_or_else(|| self.error("unexpected end of file in an escape"))?;
        self.pos += c.len_utf8();
        Ok(match c {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            '0' => '\0',
            '\\' | '"' | '\'' => c,
            'x' => {
                let hex = self
                    .rest()
                    .get(..2)
                    .ok_or_else(|| self.error("bad `\\x` escape"))?;
                let code = u8::from_str_radix(hex, 16)
                    .ok()
                    .filter(u8::is_ascii)
                    .ok_or_else(|| self.error("bad `\\x` escape"))?;
                self.pos += 2;
                char::from(code)
            }
            'u' => {
                self.expect('{')?;
                let close = self
                    .rest()
                    .find('}')
                    .ok_or_else(|| self.error("bad `\\u` escape"))?;
                let hex = &self.rest()[..close];
                let c = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| self.error("bad `\\u` escape"))?;
                self.pos += close + 1;
                c
            }
            other => return Err(self.error(format!("unknown escape `\\{other}`"))),
        })
    }

    fn string(&mut self) -> Result<String, TreeError> {
        let start = self.pos;
        self.expect('"')?;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                self.pos = start;
                return Err(self.error("unclosed string"));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok(out),
                '\\' => out.push(self.escape()?),
                c => out.push(c),
            }
        }
    }

    fn raw_string(&mut self) -> Result<Tree, TreeError> {
        let start = self.pos;
        self.pos += 1; // the `r`
        let hashes = self.rest().len() - self.rest().trim_start_matches('#').len();
        self.pos += hashes;
        self.expect('"')?;
        let close = format!("\"{}", "#".repeat(hashes));
        match self.rest().find(&close) {
            Some(end) => {
                let s = self.rest()[..end].to_string();
                self.pos += end + close.len();
                Ok(Tree::Str(s))
            }
            None => {
                self.pos = start;
                Err(self.error("unclosed raw string"))
            }
        }
    }

    fn char_literal(&mut self) -> Result<Tree, TreeError> {
        self.expect('\'')?;
        let c = match self.peek() {
            Some('\\') => {
                self.pos += 1;
                self.escape()?
            }
            Some(c) => {
                self.pos += c.len_utf8();
                c
            }
            None => return Err(self.error("unexpected end of file in a character")),
        };
        self.expect('\'')?;
        Ok(Tree::Char(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_survive_a_round_trip() {
        let text = r##"#![enable(implicit_some)]
// a comment
(
    version: 0, /* nested /* block */ comment */
    design: (
        title: "a \"quoted\" name\n",
        devices: [(id: 3, kind: GpuNode((gpu: "h100", nics: []))), (kind: Host((role: Cpu)))],
        state: Degraded(fraction: 0.5),
        tech: NvLink,
        maybe: Some(-1.5e-3),
        nothing: None,
        pair: (1, 'x'),
        table: {"a": 0x1F},
        empty: (),
        raw: r#"no \escapes"#,
    ),
)"##;
        let doc = parse(text).unwrap();
        assert_eq!(
            doc.attributes,
            vec!["#![enable(implicit_some)]".to_string()]
        );
        let design = doc.value.field("design").unwrap();
        assert_eq!(
            design.field("title"),
            Some(&Tree::Str("a \"quoted\" name\n".into()))
        );
        assert_eq!(design.field("tech"), Some(&Tree::Ident("NvLink".into())));
        assert_eq!(
            design.field("maybe"),
            Some(&Tree::Tuple(
                Some("Some".into()),
                vec![Tree::Number("-1.5e-3".into())]
            ))
        );
        assert_eq!(
            design.field("state"),
            Some(&Tree::Struct(
                Some("Degraded".into()),
                vec![("fraction".into(), Tree::Number("0.5".into()))]
            ))
        );
        assert_eq!(design.field("raw"), Some(&Tree::Str("no \\escapes".into())));
        // Printing and parsing again gives the same tree.
        let printed = print(&doc);
        assert_eq!(parse(&printed).unwrap(), doc);
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("(\n  a: 1,\n  b: ?,\n)").unwrap_err();
        assert_eq!((e.line, e.column), (3, 6));
        let e = parse("(a: \"open").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 5, "unclosed string")
        );
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        let e = parse(&deep).unwrap_err();
        assert_eq!((e.line, e.column), (1, MAX_DEPTH + 1));
    }

    #[test]
    fn fields_can_be_renamed_and_set() {
        let mut doc = parse("(title: \"x\", notes: \"\")").unwrap();
        assert!(doc.value.rename_field("title", "name"));
        assert!(!doc.value.rename_field("title", "name"));
        assert!(doc.value.set_field("groups", Tree::List(vec![])));
        assert_eq!(
            doc.value.remove_field("notes"),
            Some(Tree::Str(String::new()))
        );
        assert_eq!(print(&doc), "(name:\"x\",groups:[],)");
    }
}
