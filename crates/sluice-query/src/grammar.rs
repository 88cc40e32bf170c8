//! The query grammar, in nom. Every string parses: an item always consumes at least one
//! character, and whatever is not an operator is text to find.
//!
//! ```text
//! query        = *WS *(item *WS)
//! item         = alternatives / exclusion / needle
//! alternatives = positive 1*(1*WS "OR" 1*WS positive)   ; a OR b OR "c d"
//! exclusion    = "-" needle                              ; -word, -"a phrase"
//! positive     = needle that does not start with "-"
//! needle       = phrase / term
//! phrase       = DQUOTE *(not DQUOTE) [DQUOTE]           ; unclosed: to the end of the query
//! term         = 1*(not WS, not DQUOTE)
//! ```
//!
//! `OR` is an operator only in upper case and only between two positive needles; anywhere
//! else it is a word to find. A `-` that starts no needle (alone, or before a space) is a word.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_till1, take_while, take_while1};
use nom::character::complete::char;
use nom::combinator::{map, verify};
use nom::multi::many1;
use nom::sequence::preceded;
use nom::{IResult, Parser};

use crate::{Clause, Needle};

type Res<'a, T> = IResult<&'a str, T>;

fn space0(input: &str) -> Res<'_, &str> {
    take_while(char::is_whitespace).parse(input)
}

fn space1(input: &str) -> Res<'_, &str> {
    take_while1(char::is_whitespace).parse(input)
}

/// A phrase between double quotes; an unclosed one runs to the end of the query.
fn phrase(input: &str) -> Res<'_, Needle> {
    let (rest, _) = char('"').parse(input)?;
    Ok(match rest.split_once('"') {
        Some((text, after)) => (after, Needle::phrase(text)),
        None => ("", Needle::phrase(rest)),
    })
}

fn term(input: &str) -> Res<'_, Needle> {
    map(take_till1(|c: char| c.is_whitespace() || c == '"'), Needle::term).parse(input)
}

fn needle(input: &str) -> Res<'_, Needle> {
    alt((phrase, term)).parse(input)
}

fn positive(input: &str) -> Res<'_, Needle> {
    verify(needle, |needle: &Needle| needle.phrase || !needle.text.starts_with('-')).parse(input)
}

fn alternatives(input: &str) -> Res<'_, Clause> {
    let (rest, first) = positive(input)?;
    let (rest, others) = many1(preceded((space1, tag("OR"), space1), positive)).parse(rest)?;
    let mut needles = vec![first];
    needles.extend(others);
    Ok((rest, Clause::AnyOf(needles)))
}

fn exclusion(input: &str) -> Res<'_, Clause> {
    map(preceded(char('-'), needle), Clause::Excludes).parse(input)
}

fn item(input: &str) -> Res<'_, Clause> {
    alt((alternatives, exclusion, map(needle, Clause::Contains))).parse(input)
}

/// Every clause of `input`, in order.
pub(crate) fn clauses(input: &str) -> Vec<Clause> {
    let mut clauses = Vec::new();
    let mut rest = input;
    loop {
        rest = space0(rest).map_or(rest, |(after, _)| after);
        if rest.is_empty() {
            return clauses;
        }
        match item(rest) {
            Ok((after, clause)) if after.len() < rest.len() => {
                clauses.push(clause);
                rest = after;
            }
            // Unreachable by the grammar (a non-space character always starts an item); kept
            // so that no input can loop: the rest becomes one term.
            _ => {
                clauses.push(Clause::Contains(Needle::term(rest.trim_end())));
                return clauses;
            }
        }
    }
}
