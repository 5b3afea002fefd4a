//! Cuts a PTX module into one module per entry point: the header, the entry, and what it
//! needs (the functions it calls, directly or not, and the variables it names), in the
//! module's order. The driver compiles a module whole when it is loaded, so a product that
//! loads only its own entry pays for one kernel's compilation instead of a module's.
//!
//! The build script runs this on each module and embeds the result as byte ranges of the
//! module's text ([`Piece`]), adjacent ranges merged; the library joins an entry's ranges
//! when it first loads it (`ptx::entry`).
//! It reads the PTX that LLVM's NVPTX back end writes: top-level items begin at column 0,
//! bodies are brace-balanced.
use std::collections::HashMap;
use std::ops::Range;

/// An entry point's module: the byte ranges of the whole module's text that make it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub entry: String,
    pub ranges: Vec<Range<usize>>,
}

/// One top-level item of a module: its bytes, the name it declares or defines (none for
/// the header's directives) and whether it is an entry point.
struct Item {
    bytes: Range<usize>,
    name: Option<String>,
    entry: bool,
}

/// Why a module could not be cut.
#[derive(Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A brace closes with none open, or the text ends inside an item.
    Unbalanced { line: usize },
    /// An item whose name could not be read.
    Unnamed { line: usize },
}

/// The module `ptx`, one [`Piece`] per entry point, in the module's order.
pub fn split(ptx: &str) -> Result<Vec<Piece>, SplitError> {
    let items = items(ptx)?;
    let by_name: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| item.name.as_deref().map(|n| (n, i)))
        .collect();
    // What each named item refers to: the names of other items among its identifiers.
    let refers: Vec<Vec<&str>> = items
        .iter()
        .map(|item| {
            let mut names: Vec<&str> = identifiers(&ptx[item.bytes.clone()])
                .filter(|id| by_name.contains_key(id) && Some(*id) != item.name.as_deref())
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        })
        .collect();
    let mut pieces = Vec::new();
    for (i, item) in items.iter().enumerate().filter(|(_, item)| item.entry) {
        let name = item.name.as_deref().unwrap_or_default();
        // The entry and every name it reaches; a name may be declared by several items (a
        // function's prototype and its body).
        let mut needed = vec![name];
        let mut next = 0;
        while next < needed.len() {
            for (j, other) in items.iter().enumerate() {
                if other.name.as_deref() == Some(needed[next]) {
                    for &n in &refers[j] {
                        if !needed.contains(&n) {
                            needed.push(n);
                        }
                    }
                }
            }
            next += 1;
        }
        let ranges = items
            .iter()
            .enumerate()
            .filter(|(j, other)| match other.name.as_deref() {
                None => true,
                Some(n) => (other.entry && *j == i) || (!other.entry && needed.contains(&n)),
            })
            .fold(Vec::<Range<usize>>::new(), |mut ranges, (_, other)| {
                match ranges.last_mut() {
                    Some(last) if last.end == other.bytes.start => last.end = other.bytes.end,
                    _ => ranges.push(other.bytes.clone()),
                }
                ranges
            });
        pieces.push(Piece {
            entry: name.to_string(),
            ranges,
        });
    }
    Ok(pieces)
}

/// The module's top-level items, each with the newline that ends it. Comments and blank
/// lines between items belong to none.
fn items(ptx: &str) -> Result<Vec<Item>, SplitError> {
    let mut items = Vec::new();
    // The open item: where it starts, its line, the brace depth, whether a body opened.
    let mut open: Option<(usize, usize, i64, bool)> = None;
    let mut at = 0;
    for (number, line) in ptx.split_inclusive('\n').enumerate() {
        let start = at;
        at += line.len();
        let code = line.split("//").next().unwrap_or_default();
        if open.is_none() {
            let trimmed = code.trim();
            if trimmed.is_empty() {
                continue;
            }
            open = Some((start, number, 0, false));
        }
        let Some((first, first_line, depth, body)) = open.as_mut() else {
            continue;
        };
        for b in code.bytes() {
            match b {
                b'{' => {
                    *depth += 1;
                    *body = true;
                }
                b'}' => *depth -= 1,
                _ => {}
            }
        }
        if *depth < 0 {
            return Err(SplitError::Unbalanced { line: number + 1 });
        }
        let ended = *depth == 0 && (*body || code.trim_end().ends_with(';') || is_header(code));
        if ended {
            let bytes = *first..at;
            let head = &ptx[bytes.clone()];
            let name = if is_header(head) {
                None
            } else {
                Some(name_of(head).ok_or(SplitError::Unnamed {
                    line: *first_line + 1,
                })?)
            };
            let entry = head.split_whitespace().take(2).any(|w| w == ".entry");
            items.push(Item { bytes, name, entry });
            open = None;
        }
    }
    match open {
        Some((_, line, _, _)) => Err(SplitError::Unbalanced { line: line + 1 }),
        None => Ok(items),
    }
}

/// Whether `line` is one of the directives every module opens with.
fn is_header(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default();
    matches!(first, ".version" | ".target" | ".address_size")
}

/// The name an item declares: a function's or entry's (after an optional return
/// parameter list), or a variable's (its last identifier before `[`, `=` or `;`).
fn name_of(item: &str) -> Option<String> {
    let words: Vec<&str> = item.split_whitespace().collect();
    if let Some(at) = words.iter().position(|w| *w == ".func" || *w == ".entry") {
        let mut rest = item[item.find(words[at])? + words[at].len()..].trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
        return identifiers(rest).next().map(str::to_string);
    }
    let declaration = item.split(['[', '=', ';']).next()?;
    identifiers(declaration).last().map(str::to_string)
}

/// The identifiers of `text` (PTX: letters, digits, `_` and `$`, not starting with a digit;
/// `%` and `.` start register and directive names, which no item declares).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            if word(bytes[at]) {
                let start = at;
                while at < bytes.len() && word(bytes[at]) {
                    at += 1;
                }
                let before = start.checked_sub(1).map(|i| bytes[i]);
                if !bytes[start].is_ascii_digit() && !matches!(before, Some(b'%' | b'.')) {
                    return Some(&text[start..at]);
                }
            } else {
                at += 1;
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "//\n// comment\n//\n\n.version 8.0\n.target sm_90a\n.address_size 64\n\n\t// .globl\tone\n.func helper\n(\n\t.param .b64 helper_param_0\n)\n;\n.func unused\n(\n)\n;\n.extern .shared .align 32 .b8 smem[];\n\n.visible .entry one(\n\t.param .u64 .ptr one_param_0\n)\n.maxntid 128, 1, 1\n{\n\t.reg .b64 %rd<3>;\n\tmov.u64 %rd1, smem;\n\t{ // callseq 0, 0\n\tcall.uni helper, (param0);\n\t}\n\tret;\n}\n\t// .globl\ttwo\n.visible .entry two(\n)\n{\n\tret;\n}\n.func helper(\n\t.param .b64 helper_param_0\n)\n{\n\tret;\n}\n.func unused(\n)\n{\n\tret;\n}\n";

    fn join(ptx: &str, piece: &Piece) -> String {
        piece.ranges.iter().map(|r| &ptx[r.clone()]).collect()
    }

    #[test]
    fn an_entry_takes_the_header_and_what_it_reaches() {
        let pieces = split(MODULE).unwrap();
        let names: Vec<_> = pieces.iter().map(|p| p.entry.as_str()).collect();
        assert_eq!(names, ["one", "two"]);
        let one = join(MODULE, &pieces[0]);
        assert!(one.starts_with(".version 8.0\n.target sm_90a\n.address_size 64\n"));
        assert!(one.contains(".func helper\n(") && one.contains(".func helper(\n"));
        assert!(one.contains("smem[]") && one.contains(".entry one("));
        assert!(!one.contains("unused") && !one.contains(".entry two"));
        let two = join(MODULE, &pieces[1]);
        assert_eq!(
            two,
            ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry two(\n)\n{\n\tret;\n}\n"
        );
    }

    #[test]
    fn unbalanced_text_is_refused() {
        assert_eq!(
            split(".version 8.0\n.visible .entry x(\n)\n{\n"),
            Err(SplitError::Unbalanced { line: 2 })
        );
        assert_eq!(
            split(".version 8.0\n}\n"),
            Err(SplitError::Unbalanced { line: 2 })
        );
    }
}
