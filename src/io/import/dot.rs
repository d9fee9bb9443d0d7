//! Graphviz DOT: what our DOT export writes (tier subgraphs, nodes labelled with their
//! names, edges labelled `InfiniBand 400 Gb/s`) and common simple graphs: `graph` or
//! `digraph`, node statements with attributes, `a -- b` and `a -> b` edges (chains too)
//! with attributes, subgraphs, comments. A node's `label` is the device's name, `part` its
//! catalog part, `pos` (`"x,y"`, y up as Graphviz has it) its position, `tier` (0 to 3 or
//! nodes/leaves/spines/cores) its tier; a subgraph named like one of our tiers gives its
//! nodes that tier. An edge's `label`, or `technology` and `rate` (with `lanes`), say what
//! the link is. Written by hand for line and column in every error.

use super::ImportError;
use super::build::{Importer, NamedDevice, NamedLink};
use super::labels::{parse_link_label, parse_rate, parse_technology};
use crate::io::export::dot::tier_name;
use crate::model::{Catalog, Design, Pos};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Id(String),
    Open,
    Close,
    OpenList,
    CloseList,
    Equals,
    Semicolon,
    Comma,
    Colon,
    EdgeOp,
    Plus,
}

#[derive(Debug, Clone)]
struct Spanned {
    token: Token,
    line: usize,
    column: usize,
}

struct Lexer<'t> {
    chars: std::iter::Peekable<std::str::Chars<'t>>,
    line: usize,
    column: usize,
    at_line_start: bool,
}

impl<'t> Lexer<'t> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
            self.at_line_start = true;
        } else {
            self.column += 1;
            if !c.is_whitespace() {
                self.at_line_start = false;
            }
        }
        Some(c)
    }

    fn tokens(mut self, origin: &str) -> Result<Vec<Spanned>, ImportError> {
        let mut out = Vec::new();
        loop {
            let line_start = self.at_line_start;
            let (line, column) = (self.line, self.column);
            let error = |message: String| ImportError::Syntax {
                origin: origin.to_string(),
                line,
                column,
                message,
            };
            let Some(c) = self.bump() else { break };
            let token = match c {
                c if c.is_whitespace() => continue,
                // A `#` line is C preprocessor output, which DOT skips.
                '#' if line_start => {
                    while self.chars.peek().is_some_and(|c| *c != '\n') {
                        self.bump();
                    }
                    continue;
                }
                '/' if self.chars.peek() == Some(&'/') => {
                    while self.chars.peek().is_some_and(|c| *c != '\n') {
                        self.bump();
                    }
                    continue;
                }
                '/' if self.chars.peek() == Some(&'*') => {
                    self.bump();
                    let mut last = ' ';
                    loop {
                        let Some(c) = self.bump() else {
                            return Err(error("a /* comment is never closed".into()));
                        };
                        if last == '*' && c == '/' {
                            break;
                        }
                        last = c;
                    }
                    continue;
                }
                '{' => Token::Open,
                '}' => Token::Close,
                '[' => Token::OpenList,
                ']' => Token::CloseList,
                '=' => Token::Equals,
                ';' => Token::Semicolon,
                ',' => Token::Comma,
                ':' => Token::Colon,
                '+' => Token::Plus,
                '-' if matches!(self.chars.peek(), Some('-' | '>')) => {
                    self.bump();
                    Token::EdgeOp
                }
                '"' => Token::Id(
                    self.quoted()
                        .ok_or_else(|| error("a quoted string is never closed".into()))?,
                ),
                '<' => Token::Id(
                    self.html()
                        .ok_or_else(|| error("an HTML string <...> is never closed".into()))?,
                ),
                c if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' => {
                    let mut id = String::from(c);
                    while let Some(&n) = self.chars.peek() {
                        if n.is_alphanumeric() || n == '_' || n == '.' {
                            id.push(n);
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    Token::Id(id)
                }
                c => return Err(error(format!("unexpected `{c}`"))),
            };
            out.push(Spanned {
                token,
                line,
                column,
            });
        }
        Ok(out)
    }

    /// The rest of a quoted string, escapes read as our export writes them.
    fn quoted(&mut self) -> Option<String> {
        let mut text = String::new();
        loop {
            match self.bump()? {
                '"' => return Some(text),
                '\\' => match self.bump()? {
                    '"' => text.push('"'),
                    '\\' => text.push('\\'),
                    'n' | 'l' | 'r' => text.push('\n'),
                    // A backslash before a line break continues the line.
                    '\n' => {}
                    other => {
                        text.push('\\');
                        text.push(other);
                    }
                },
                c => text.push(c),
            }
        }
    }

    fn html(&mut self) -> Option<String> {
        let mut depth = 1;
        let mut text = String::new();
        loop {
            let c = self.bump()?;
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(text);
                    }
                }
                _ => {}
            }
            text.push(c);
        }
    }
}

struct Parser<'a, 'c> {
    tokens: Vec<Spanned>,
    at: usize,
    origin: &'a str,
    importer: Importer<'c>,
    /// Where the file ended, for "the file ends inside ...".
    end: (usize, usize),
}

type Attributes = Vec<(String, String, usize)>;

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|s| &s.token)
    }

    fn here(&self) -> (usize, usize) {
        self.tokens
            .get(self.at)
            .map_or(self.end, |s| (s.line, s.column))
    }

    fn error(&self, message: impl Into<String>) -> ImportError {
        let (line, column) = self.here();
        ImportError::Syntax {
            origin: self.origin.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).map(|s| s.token.clone());
        self.at += 1;
        t
    }

    fn expect(&mut self, token: Token, what: &str) -> Result<(), ImportError> {
        if self.peek() == Some(&token) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn id(&mut self, what: &str) -> Result<String, ImportError> {
        match self.peek() {
            Some(Token::Id(_)) => {
                let Some(Token::Id(mut id)) = self.next() else {
                    return Err(self.error(format!("expected {what}")));
                };
                // "a" + "b" concatenates.
                while self.peek() == Some(&Token::Plus) {
                    self.at += 1;
                    id.push_str(&self.id("a string after +")?);
                }
                Ok(id)
            }
            _ => Err(self.error(format!("expected {what}"))),
        }
    }

    fn keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Id(id)) if id.eq_ignore_ascii_case(word))
    }

    fn graph(&mut self) -> Result<String, ImportError> {
        if self.keyword("strict") {
            self.at += 1;
        }
        if !(self.keyword("graph") || self.keyword("digraph")) {
            return Err(self.error("expected `graph` or `digraph`"));
        }
        self.at += 1;
        let name = if matches!(self.peek(), Some(Token::Id(_))) {
            self.id("the graph's name")?
        } else {
            String::new()
        };
        self.expect(Token::Open, "`{`")?;
        self.statements(None)?;
        self.expect(Token::Close, "`}` closing the graph")?;
        if self.peek().is_some() {
            return Err(self.error("text after the graph's closing `}`"));
        }
        Ok(name)
    }

    /// Statements up to the closing `}` (not taken); `tier` from the enclosing subgraph.
    fn statements(&mut self, tier: Option<u8>) -> Result<(), ImportError> {
        loop {
            match self.peek() {
                None => return Err(self.error("the file ends before a closing `}`")),
                Some(Token::Close) => return Ok(()),
                Some(Token::Semicolon) => self.at += 1,
                Some(Token::Open) => {
                    self.at += 1;
                    self.statements(tier)?;
                    self.expect(Token::Close, "`}`")?;
                }
                Some(Token::Id(_)) if self.keyword("subgraph") => {
                    self.at += 1;
                    let mut inner = tier;
                    if matches!(self.peek(), Some(Token::Id(_))) {
                        let name = self.id("the subgraph's name")?;
                        inner = tier_of(&name).or(tier);
                    }
                    self.expect(Token::Open, "`{` opening the subgraph")?;
                    self.statements(inner)?;
                    self.expect(Token::Close, "`}` closing the subgraph")?;
                }
                Some(Token::Id(_))
                    if self.keyword("graph") || self.keyword("node") || self.keyword("edge") =>
                {
                    // Defaults for what follows: styling, which a design does not keep.
                    self.at += 1;
                    self.attributes()?;
                }
                Some(Token::Id(_)) => self.node_or_edge(tier)?,
                Some(_) => return Err(self.error("expected a statement")),
            }
        }
    }

    fn node_id(&mut self) -> Result<(String, usize), ImportError> {
        let (line, _) = self.here();
        let id = self.id("a node")?;
        // `node:port:compass`: the port is Graphviz's drawing, not ours.
        while self.peek() == Some(&Token::Colon) {
            self.at += 1;
            self.id("a port after `:`")?;
        }
        Ok((id, line))
    }

    fn node_or_edge(&mut self, tier: Option<u8>) -> Result<(), ImportError> {
        let (first, line) = self.node_id()?;
        if self.peek() == Some(&Token::Equals) {
            // `rank=same`, `label="..."`: an attribute of the (sub)graph.
            self.at += 1;
            self.id("a value")?;
            return Ok(());
        }
        let mut chain = vec![first];
        while self.peek() == Some(&Token::EdgeOp) {
            self.at += 1;
            if self.peek() == Some(&Token::Open) || self.keyword("subgraph") {
                return Err(self.error("an edge to a subgraph: write one edge per pair"));
            }
            chain.push(self.node_id()?.0);
        }
        let attributes = self.attributes()?;
        if chain.len() == 1 {
            let device = self.device(&chain[0], &attributes, tier, line)?;
            self.importer.device(device);
        } else {
            for key in &chain {
                self.importer.device(NamedDevice {
                    key: key.clone(),
                    name: key.clone(),
                    tier,
                    line,
                    ..NamedDevice::default()
                });
            }
            let (tech, lanes, rate) = self.link_kind(&attributes, line)?;
            for pair in chain.windows(2) {
                self.importer.link(NamedLink {
                    a: pair[0].clone(),
                    b: pair[1].clone(),
                    tech,
                    rate,
                    lanes,
                    line,
                });
            }
        }
        Ok(())
    }

    /// `[a=b, c=d][e=f]`, each with the line it is on.
    fn attributes(&mut self) -> Result<Attributes, ImportError> {
        let mut out = Vec::new();
        while self.peek() == Some(&Token::OpenList) {
            self.at += 1;
            while self.peek() != Some(&Token::CloseList) {
                let (line, _) = self.here();
                let key = self.id("an attribute name or `]`")?;
                self.expect(Token::Equals, "`=` after an attribute name")?;
                let value = self.id("an attribute value")?;
                out.push((key, value, line));
                if matches!(self.peek(), Some(Token::Comma | Token::Semicolon)) {
                    self.at += 1;
                }
            }
            self.at += 1;
        }
        Ok(out)
    }

    fn device(
        &self,
        key: &str,
        attributes: &Attributes,
        tier: Option<u8>,
        line: usize,
    ) -> Result<NamedDevice, ImportError> {
        let mut device = NamedDevice {
            key: key.to_string(),
            name: key.to_string(),
            tier,
            line,
            ..NamedDevice::default()
        };
        for (name, value, at) in attributes {
            let bad = |message: String| ImportError::Line {
                origin: self.origin.to_string(),
                line: *at,
                message,
            };
            match name.as_str() {
                "label" if !value.is_empty() && value != "\\N" => device.name = value.clone(),
                "part" => device.part = Some(value.clone()),
                "pos" => device.pos = Some(parse_pos(value).map_err(bad)?),
                "tier" => {
                    let t = value
                        .parse::<u8>()
                        .ok()
                        .filter(|t| *t <= 3)
                        .or_else(|| tier_of(value))
                        .ok_or_else(|| {
                            bad(format!(
                                "tier `{value}`: 0 to 3, or nodes, leaves, spines, cores"
                            ))
                        })?;
                    device.tier = Some(t);
                }
                _ => {}
            }
        }
        Ok(device)
    }

    /// Technology, lanes and rate from `technology`/`rate`/`lanes` or the label.
    fn link_kind(
        &self,
        attributes: &Attributes,
        line: usize,
    ) -> Result<(crate::model::LinkTech, u32, crate::model::Bandwidth), ImportError> {
        let get = |key: &str| attributes.iter().find(|(k, _, _)| k == key);
        let bad = |at: usize, message: String| ImportError::Line {
            origin: self.origin.to_string(),
            line: at,
            message,
        };
        if let Some((_, tech, at)) = get("technology").or(get("tech")) {
            let tech = parse_technology(tech).map_err(|e| bad(*at, e))?;
            let Some((_, rate, at)) = get("rate") else {
                return Err(bad(*at, "a technology without a rate".into()));
            };
            let (mut lanes, rate) = parse_rate(rate).map_err(|e| bad(*at, e))?;
            if let Some((_, text, at)) = get("lanes") {
                lanes = text
                    .parse()
                    .ok()
                    .filter(|l| *l > 0)
                    .ok_or_else(|| bad(*at, format!("lanes `{text}` is not a count")))?;
            }
            return Ok((tech, lanes, rate));
        }
        match get("label") {
            Some((_, label, at)) => parse_link_label(label).map_err(|e| bad(*at, e)),
            None => Err(bad(
                line,
                "an edge without technology and rate: give label=\"InfiniBand 400 Gb/s\" \
                 or technology=InfiniBand, rate=400G"
                    .into(),
            )),
        }
    }
}

/// The tier a subgraph or `tier` value names, as our export names the tiers.
fn tier_of(name: &str) -> Option<u8> {
    (0..=3u8).find(|t| tier_name(*t).eq_ignore_ascii_case(name))
}

/// Graphviz's `pos="x,y"` (a trailing `!` pins it), y up; the canvas's y grows down.
fn parse_pos(text: &str) -> Result<Pos, String> {
    let bad = || format!("pos `{text}` is not \"x,y\"");
    let (x, y) = text.trim_end_matches('!').split_once(',').ok_or_else(bad)?;
    let x: f32 = x.trim().parse().map_err(|_| bad())?;
    let y: f32 = y.trim().parse().map_err(|_| bad())?;
    if !(x.is_finite() && y.is_finite()) {
        return Err(bad());
    }
    Ok(Pos::new(x, -y + 0.0))
}

pub fn dot_to_design(text: &str, origin: &str, catalog: &Catalog) -> Result<Design, ImportError> {
    let lexer = Lexer {
        chars: text.chars().peekable(),
        line: 1,
        column: 1,
        at_line_start: true,
    };
    let tokens = lexer.tokens(origin)?;
    let end = super::line_column(text, text.len());
    let mut parser = Parser {
        tokens,
        at: 0,
        origin,
        importer: Importer::new(catalog, origin, Design::default()),
        end,
    };
    let name = parser.graph()?;
    let mut design = parser.importer.finish()?;
    design.name = if name.is_empty() {
        std::path::Path::new(origin)
            .file_stem()
            .map_or(origin.to_string(), |s| s.to_string_lossy().into_owned())
    } else {
        name
    };
    Ok(design)
}
