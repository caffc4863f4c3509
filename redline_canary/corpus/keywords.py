"""Reserved words per language, for the variant lint (docs/corpus.md#variants). Pure data.

Why a table: a variant renames identifiers by text, and a rename onto a reserved word
(``Order`` → ``class``) or of one (``type`` → ``kind``) turns valid code into a syntax
error that no reviewer would ever see in real code. The file name decides the language,
as it decides the comment syntax in :mod:`~redline_canary.corpus.markers`.
"""

from __future__ import annotations

_JS = frozenset({
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
    "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof",
    "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void",
    "while", "with", "yield", "let", "static", "implements", "interface", "package", "private", "protected",
    "public", "await", "async", "of", "as", "type", "declare", "namespace", "module", "readonly",
    "abstract", "keyof", "never", "unknown", "any", "satisfies", "infer", "is", "undefined",
})
_PY = frozenset({
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match",
    "case", "self",
})
_GO = frozenset({
    "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func",
    "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct",
    "switch", "type", "var", "nil", "true", "false", "iota",
})
_JAVA = frozenset({
    "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "const", "continue",
    "default", "do", "double", "else", "enum", "extends", "final", "finally", "float", "for", "goto", "if",
    "implements", "import", "instanceof", "int", "interface", "long", "native", "new", "package", "private",
    "protected", "public", "return", "short", "static", "strictfp", "super", "switch", "synchronized",
    "this", "throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false", "null",
    "var", "record", "yield", "sealed", "permits",
})
_KOTLIN = frozenset({
    "as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in", "interface", "is",
    "null", "object", "package", "return", "super", "this", "throw", "true", "try", "typealias", "typeof",
    "val", "var", "when", "while", "by", "catch", "constructor", "delegate", "dynamic", "field", "file",
    "finally", "get", "import", "init", "param", "property", "receiver", "set", "setparam", "where",
    "actual", "abstract", "annotation", "companion", "const", "crossinline", "data", "enum", "expect",
    "external", "final", "infix", "inline", "inner", "internal", "lateinit", "noinline", "open", "operator",
    "out", "override", "private", "protected", "public", "reified", "sealed", "suspend", "tailrec",
    "vararg", "value", "it",
})
_CSHARP = frozenset({
    "abstract", "as", "base", "bool", "break", "byte", "case", "catch", "char", "checked", "class", "const",
    "continue", "decimal", "default", "delegate", "do", "double", "else", "enum", "event", "explicit",
    "extern", "false", "finally", "fixed", "float", "for", "foreach", "goto", "if", "implicit", "in", "int",
    "interface", "internal", "is", "lock", "long", "namespace", "new", "null", "object", "operator", "out",
    "override", "params", "private", "protected", "public", "readonly", "ref", "return", "sbyte", "sealed",
    "short", "sizeof", "stackalloc", "static", "string", "struct", "switch", "this", "throw", "true", "try",
    "typeof", "uint", "ulong", "unchecked", "unsafe", "ushort", "using", "virtual", "void", "volatile",
    "while", "var", "async", "await", "record", "init", "get", "set", "value", "nameof", "when", "where",
    "yield",
})
_SWIFT = frozenset({
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
    "inout", "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public",
    "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
    "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
    "throw", "switch", "where", "while", "as", "Any", "false", "is", "nil", "self", "Self", "super",
    "throws", "true", "try", "async", "await", "some", "any",
})
_HCL = frozenset({
    "resource", "data", "variable", "output", "locals", "module", "provider", "terraform", "for", "in",
    "if", "true", "false", "null", "each", "count", "var", "local", "path", "self",
})

BY_SUFFIX: dict[str, frozenset[str]] = {
    ".js": _JS, ".mjs": _JS, ".cjs": _JS, ".jsx": _JS, ".ts": _JS, ".tsx": _JS, ".vue": _JS,
    ".svelte": _JS, ".html": _JS, ".py": _PY, ".go": _GO, ".java": _JAVA, ".kt": _KOTLIN,
    ".kts": _KOTLIN, ".cs": _CSHARP, ".swift": _SWIFT, ".tf": _HCL,
}
# Words a marker line is made of: renaming one would change the answer key itself.
MARKER_WORDS = frozenset({"SEED", "BORDERLINE", "SITE", "BLOCKER", "CRITICAL", "MAJOR", "MINOR", "INFO",
                          "symbol", "lines"})


def reserved_for(paths: list[str]) -> frozenset[str]:
    """Every reserved word of the languages these files are written in, plus the marker words."""
    words: set[str] = set(MARKER_WORDS)
    for path in paths:
        dot = path.rfind(".")
        words |= BY_SUFFIX.get(path[dot:] if dot != -1 else "", frozenset())
    return frozenset(words)
