"""Copy the front-end files named in package.json ``vendorAssets`` from node_modules/ into
static/vendor/ (gitignored). Run after ``npm ci``; exits 1 naming any file that is missing.

To add an asset: add the package to package.json ``dependencies`` and one line
``"name-in-static-vendor": "node_modules/<package>/<file>"`` to ``vendorAssets``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "vendor"


def main() -> int:
    """Copy every asset; return 0, or 1 when a source file does not exist."""
    assets: dict[str, str] = json.loads((ROOT / "package.json").read_text())["vendorAssets"]
    VENDOR.mkdir(parents=True, exist_ok=True)
    missing = [source for source in assets.values() if not (ROOT / source).is_file()]
    for source in missing:
        print(f"{source}: missing; run `npm ci` first", file=sys.stderr)
    if missing:
        return 1
    for name, source in assets.items():
        shutil.copyfile(ROOT / source, VENDOR / name)
        print(f"static/vendor/{name} <- {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
