"""Write the VS Code extension for `.arch` (TextMate grammar, language configuration, manifest) into
dsl/editors/vscode/ from dsl/highlight.py. Run after changing the language's keywords:

    .venv/bin/python tools/editors.py

Install in VS Code by copying dsl/editors/vscode to ~/.vscode/extensions/archcost-arch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "dsl" / "editors" / "vscode"


def files() -> dict[str, str]:
    from archcost.dsl.highlight import textmate_grammar

    manifest = {
        "name": "archcost-arch",
        "displayName": "archcost .arch specs",
        "description": "Syntax highlighting for archcost's model architecture language",
        "version": "0.1.0",
        "publisher": "archcost",
        "engines": {"vscode": "^1.60.0"},
        "categories": ["Programming Languages"],
        "contributes": {
            "languages": [{"id": "arch", "aliases": ["archcost", "arch"], "extensions": [".arch"],
                           "configuration": "./language-configuration.json"}],
            "grammars": [{"language": "arch", "scopeName": "source.arch", "path": "./syntaxes/arch.tmLanguage.json"}],
        },
    }
    configuration = {
        "comments": {"lineComment": "#"},
        "brackets": [["{", "}"], ["(", ")"]],
        "autoClosingPairs": [{"open": "{", "close": "}"}, {"open": "(", "close": ")"},
                             {"open": "\"", "close": "\"", "notIn": ["string", "comment"]}],
        "surroundingPairs": [["{", "}"], ["(", ")"], ["\"", "\""]],
        "indentationRules": {"increaseIndentPattern": "\\{[^}]*$", "decreaseIndentPattern": "^\\s*\\}"},
    }
    dump = lambda data: json.dumps(data, indent=2, ensure_ascii=False) + "\n"  # noqa: E731
    return {"package.json": dump(manifest), "language-configuration.json": dump(configuration),
            "syntaxes/arch.tmLanguage.json": dump(textmate_grammar())}


def main() -> int:
    for name, text in files().items():
        target = FOLDER / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
