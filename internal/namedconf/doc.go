// Package namedconf writes and reads BIND's named.conf grammar through typed
// values, so that no user string can open or close a statement.
//
// The renderer builds a File from statements (S, B) made of words (Kw, Str,
// Int, L) and calls File.Bytes; it never concatenates text. User input goes
// only through Str, ParseElement (address match list elements, rendered by
// AMLElement.Stmt) and ParseServerEntry (primaries, also-notify,
// forwarders). Kw is for words the
// program chooses. Bytes checks every word and fails, naming the statement
// path (zone "example.com" > also-notify > list (word 2) > ...), rather than
// write anything BIND could read differently. ParseStatements reads text
// such as BindCluster.spec.extraOptions into the same values, for
// validation and re-rendering; it never pastes text through.
//
// # How BIND 9.18 reads named.conf (verified)
//
// These rules come from BIND's lexer (lib/isc/lex.c, the qstring and string
// states) and were checked against Debian's BIND 9.18 named-checkconf by the
// tests in bind_test.go (TestBINDLexerFacts pins each one):
//
//   - In a quoted string a backslash escapes the next character, but BIND
//     removes the backslash only before a double quote: `\"` is `"`. Every
//     other backslash stays in the value: "a\\b" is the four characters
//     a \ \ b, and "a\qb" is a \ q b. TestBINDQuotedStringValue proves it
//     with `directory`, which names a directory that must exist: BIND
//     accepts the rendered string only when its value is exactly the name
//     we created.
//   - Therefore Str writes its value verbatim, with each `"` as `\"`, and a
//     single backslash directly before a `"` or at the end of the value
//     cannot be expressed at all (BIND would read it as an escape). Str
//     refuses such values; an even run of backslashes is fine.
//   - A quoted string may span lines (BIND parses named.conf with
//     multi-line strings), and BIND cuts a string silently at NUL
//     ("ab\0cd" is read as "ab"). Str therefore refuses every control
//     character (below U+0020, and U+007F) and invalid UTF-8.
//   - named-checkconf -p prints quoted strings escaping only `"`, which is
//     the same rule, so its output parses back with ParseStatements.
//   - Outside quotes, '{', '}', ';', '"', '!' and '/' end a word, and
//     '!' is a token of its own ("a!b" is three tokens). '#', "//" and
//     "/*" open a comment anywhere outside quotes, even inside a word
//     ("acl foo#bar" declares acl "foo"). Bare words have no escapes
//     ("a\ b" is two words). Kw therefore accepts only
//     [A-Za-z0-9_.:/*!%-] without "//" or "/*": a single '/' inside a word
//     (10.0.0.0/8) splits into the same tokens BIND would see anyway.
//   - Values BIND later reads as DNS names (zone and key names) go through a
//     second parser with its own escapes (\. and \DDD). This package
//     guarantees the string value only: validate names before rendering.
//
// TestBINDHostileStrings renders keys, zones and ACL references whose names
// are hostile (`a"; }; zone "evil`, comment openers, braces, backslashes) and
// checks that named-checkconf -p reads exactly the statements it reads for
// a harmless name, with the hostile value intact, or that Bytes refuses it.
//
// # Layout
//
// Bytes is deterministic: one statement per line, tab indentation, inline
// lists (L) on one line, a blank line around top-level blocks, and comments
// kept with what follows them. It does not sort: callers sort what must be
// sorted, and address match lists must keep their order because BIND uses
// the first match.
//
// # Parsing
//
// ParseStatements tokenizes exactly as above and builds statements: a brace
// group followed by ';' is a block; a brace group followed by more words
// (controls { inet ... allow { ... } keys { ... }; };) becomes an inline
// list word. It is stricter than BIND: bare words hold only Kw's
// characters, quoted strings no control characters. Comments are dropped.
// Errors are *SyntaxError with line:col. Parse → render → parse gives the
// same statements (FuzzParseStatements), and named-checkconf -p reads the
// original and the re-rendering identically (TestBINDParseStatementsEquivalent).
package namedconf
