"""Which language a path is written in: one table from file name to language."""

from __future__ import annotations

from pathlib import PurePosixPath

# Extension (lower case, with the dot) -> language name as tree-sitter-language-pack spells it.
EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp",
    ".cs": "csharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin", ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala", ".sc": "scala",
    ".sh": "bash", ".bash": "bash",
    ".lua": "lua",
    ".zig": "zig",
    ".dart": "dart",
    ".m": "objc",
    ".jl": "julia",
    ".r": "r",
    ".hs": "haskell",
    ".ex": "elixir", ".exs": "elixir",
    ".ml": "ocaml", ".mli": "ocaml_interface",
    ".pl": "perl", ".pm": "perl", ".t": "perl",
}  # fmt: skip

# Whole file names that decide the language on their own.
FILENAMES: dict[str, str] = {
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
}


def language_for(path: str) -> str | None:
    """The language of a workspace-relative POSIX path, or None when it is not one we parse."""
    p = PurePosixPath(path)
    if p.name in FILENAMES:
        return FILENAMES[p.name]
    return EXTENSIONS.get(p.suffix.lower())


# Language -> the module under symdiff.parse.languages whose FAMILY extracts it.
FAMILIES: dict[str, str] = {
    "python": "python",
    "javascript": "ecmascript",
    "typescript": "ecmascript",
    "tsx": "ecmascript",
    "go": "golang",
    "rust": "rust",
    "c": "cfamily",
    "cpp": "cfamily",
    "java": "java",
    "csharp": "csharp",
    "ruby": "ruby",
    "php": "php",
    "kotlin": "kotlin",
    "swift": "swift",
    "scala": "scala",
    "bash": "bash",
    "lua": "lua",
    "perl": "perl",
    "ocaml": "ocaml",
    "ocaml_interface": "ocaml",
    "elixir": "elixir",
    "haskell": "haskell",
    "r": "r",
    "julia": "julia",
    "objc": "objc",
    "dart": "dart",
    "zig": "zig",
}


def family_module(language: str) -> str | None:
    """The dotted module whose `FAMILY` extracts `language`, or None when none does."""
    module = FAMILIES.get(language)
    return None if module is None else f"symdiff.parse.languages.{module}"
