"""Fetch the playground's front-end libraries from the npm registry and copy the files the page loads into
compiler/playground/static/vendor/, with each package's licence. The page must work with no network, so these
files ship in the wheel; run this only to change a version:

    .venv/bin/python tools/vendor_assets.py

Each package is pinned; VERSIONS.md beside the files says what they are and where they came from.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "compiler" / "serve" / "static" / "vendor"

# package@version: (folder, files to copy from the package, what the page uses it for)
PACKAGES = {
    "codemirror@5.65.21": ("codemirror", ["lib/codemirror.js", "lib/codemirror.css", "addon/mode/simple.js"],
                           "the spec editor: highlighting, line marks, error underlines"),
    "katex@0.16.47": ("katex", ["dist/katex.min.js", "dist/katex.min.css", "dist/fonts/*.woff2"],
                      "the closed forms typeset from their LaTeX"),
    "uplot@1.6.32": ("uplot", ["dist/uPlot.iife.min.js", "dist/uPlot.min.css"],
                     "the interactive plots (state, FLOPs and capacity against context, the roofline)"),
    "svg-pan-zoom@3.6.2": ("svg-pan-zoom", ["dist/svg-pan-zoom.min.js"], "pan and zoom on the diagram"),
}


def fetch(spec: str, work: Path) -> Path:
    subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", str(work)], check=True,
                   stdout=subprocess.DEVNULL)
    archive = next(work.glob(f"{spec.split('@')[0]}-*.tgz"))
    folder = work / spec.split("@")[0]
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder / "package"


def main() -> int:
    lines = ["# Vendored front-end libraries", "", "Written by `tools/vendor_assets.py` from the npm registry; "
             "each licence lies beside its files.", "", "| package | folder | used for |", "|---|---|---|"]
    with tempfile.TemporaryDirectory() as temporary:
        for spec, (folder, patterns, purpose) in PACKAGES.items():
            package = fetch(spec, Path(temporary))
            target = VENDOR / folder
            shutil.rmtree(target, ignore_errors=True)
            for pattern in patterns:
                for file in sorted(package.glob(pattern)):
                    destination = target / file.relative_to(package).relative_to(file.relative_to(package).parts[0])
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(file, destination)
            shutil.copyfile(package / "LICENSE", target / "LICENSE")
            lines.append(f"| `{spec}` | `{folder}/` | {purpose} |")
    (VENDOR / "VERSIONS.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {VENDOR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
